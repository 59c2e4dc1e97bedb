// IterableDataset under the DataLoader against PyTorch 2.13's batch order with workers
// (test/fixtures/nn/iterable_dataset.json, written by tools/nn/gen_iterable_fixtures.py).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import "../../src/index.js";
import * as data from "../../src/data/index.js";
import { Tensor } from "../../src/tensor/tensor.js";
import { readFixture } from "../nn/fixture.js";

interface Case { name: string; dataset: "sharded" | "unsharded"; n: number; batchSize: number; numWorkers: number; dropLast: boolean; batches: number[][] }
const { cases } = readFixture<{ cases: Case[] }>("iterable_dataset.json");

class Sharded extends data.IterableDataset<number> {
  constructor(readonly n: number) {
    super();
  }
  *[Symbol.iterator](): Iterator<number> {
    const w = data.getWorkerInfo();
    for (let i = w?.id ?? 0; i < this.n; i += w?.numWorkers ?? 1) yield i;
  }
}

class Unsharded extends data.IterableDataset<number> {
  *[Symbol.iterator](): Iterator<number> {
    for (let i = 0; i < 5; i++) yield i;
  }
}

const asLists = (batches: Iterable<unknown>) => [...batches].map((b) => Array.from((b as Tensor).data()));

describe("IterableDataset", () => {
  for (const c of cases) {
    it(`${c.name} batches as PyTorch does`, async () => {
      const ds = c.dataset === "sharded" ? new Sharded(c.n) : new Unsharded();
      const loader = new data.DataLoader(ds, { batchSize: c.batchSize, numWorkers: c.numWorkers, dropLast: c.dropLast });
      assert.deepEqual(asLists(loader), c.batches);
      const viaAsync: unknown[] = [];
      for await (const b of loader) viaAsync.push(b);
      assert.deepEqual(asLists(viaAsync), c.batches, "for await gives the same batches");
    });
  }

  it("getWorkerInfo is null outside a worker; each worker gets a seed of base + id", () => {
    assert.equal(data.getWorkerInfo(), null);
    const seen: { id: number; seed: bigint }[] = [];
    class Probe extends data.IterableDataset<number> {
      *[Symbol.iterator](): Iterator<number> {
        const w = data.getWorkerInfo()!;
        seen.push({ id: w.id, seed: w.seed });
        yield w.id;
      }
    }
    [...new data.DataLoader(new Probe(), { batchSize: null, numWorkers: 3 })];
    assert.deepEqual(seen.map((s) => s.id), [0, 1, 2]);
    assert.equal(seen[2].seed - seen[0].seed, 2n);
  });

  it("batchSize null yields samples; shuffle and samplers are refused; length needs the dataset's", () => {
    assert.deepEqual([...new data.DataLoader(new Sharded(3), { batchSize: null })], [0, 1, 2]);
    assert.throws(() => new data.DataLoader(new Sharded(3), { shuffle: true }), /an IterableDataset sets its own order/);
    assert.throws(() => new data.DataLoader(new Sharded(3)).length, /has no length/);
    class Sized extends Sharded {
      get length(): number {
        return this.n;
      }
    }
    assert.equal(new data.DataLoader(new Sized(7), { batchSize: 3 }).length, 3);
    const collated = [...new data.DataLoader(new Sharded(4), { batchSize: 2, collateFn: (xs: number[]) => xs.join("+") })];
    assert.deepEqual(collated, ["0+1", "2+3"]);
  });
});
