// DataLoader, samplers, collate and datasets, each checked against a one-line reference (slices of
// the data, sorted index lists, explicit stacks).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as data from "../../src/data/index.js";
import { arange, stack, tensor } from "../../src/ops/index.js";
import { Generator } from "../../src/tensor/random.js";
import type { Tensor } from "../../src/tensor/tensor.js";

const N = 10;
const xs = () => arange(N * 3, undefined, 1, { dtype: "float32" }).reshape([N, 3]);
const ys = () => arange(N);
const dataset = () => new data.TensorDataset(xs(), ys());
const rows = (t: Tensor) => t.toArray() as number[][];
const labelsOf = (batches: Tensor[][]) => batches.flatMap(([, y]) => y.toArray() as number[]);

describe("DataLoader batching", () => {
  it("yields consecutive batches equal to slices of the data, the last one short", () => {
    const batches = [...new data.DataLoader(dataset(), { batchSize: 4 })] as Tensor[][];
    assert.deepEqual(batches.map(([x]) => x.shape[0]), [4, 4, 2]);
    batches.forEach(([x, y], i) => {
      assert.deepEqual(rows(x), rows(xs().narrow(0, i * 4, x.shape[0])));
      assert.deepEqual(y.toArray(), ys().narrow(0, i * 4, x.shape[0]).toArray());
      assert.equal(y.dtype, "int32");
    });
    assert.equal(new data.DataLoader(dataset(), { batchSize: 4 }).length, 3);
  });

  it("dropLast drops the short batch", () => {
    const loader = new data.DataLoader(dataset(), { batchSize: 4, dropLast: true });
    assert.equal(loader.length, 2);
    assert.deepEqual([...loader].map((b) => (b as Tensor[])[0].shape[0]), [4, 4]);
  });

  it("shuffle visits every sample once per epoch; a seeded generator makes the order reproducible", () => {
    const run = (seed: number) => {
      const loader = new data.DataLoader(dataset(), { batchSize: 3, shuffle: true, generator: new Generator(seed) });
      return [labelsOf([...loader] as Tensor[][]), labelsOf([...loader] as Tensor[][])];
    };
    const [e1, e2] = run(7);
    assert.deepEqual([...e1].sort((a, b) => a - b), [...Array(N).keys()]);
    assert.deepEqual([...e2].sort((a, b) => a - b), [...Array(N).keys()]);
    assert.notDeepEqual(e1, e2, "each epoch draws a new order");
    assert.deepEqual(run(7), [e1, e2]);
    assert.notDeepEqual(run(8)[0], e1);
  });

  it("batchSize null yields single samples, uncollated", () => {
    const items = [...new data.DataLoader(dataset(), { batchSize: null })] as Tensor[][];
    assert.equal(items.length, N);
    assert.deepEqual(items[2][0].toArray(), [6, 7, 8]);
  });

  it("takes a sampler with setEpoch, as a DistributedSampler will be", () => {
    class EveryOther implements data.Sampler {
      epoch = 0;
      get length() {
        return N / 2;
      }
      setEpoch(epoch: number) {
        this.epoch = epoch;
      }
      *[Symbol.iterator]() {
        for (let i = this.epoch % 2; i < N; i += 2) yield i;
      }
    }
    const sampler = new EveryOther();
    const loader = new data.DataLoader(dataset(), { batchSize: 2, sampler });
    assert.deepEqual(labelsOf([...loader] as Tensor[][]), [0, 2, 4, 6, 8]);
    sampler.setEpoch(1);
    assert.deepEqual(labelsOf([...loader] as Tensor[][]), [1, 3, 5, 7, 9]);
  });

  it("takes a batchSampler, and refuses options it excludes", () => {
    const batchSampler = { length: 2, *[Symbol.iterator]() { yield [9, 0]; yield [5]; } };
    assert.deepEqual(labelsOf([...new data.DataLoader(dataset(), { batchSampler })] as Tensor[][]), [9, 0, 5]);
    assert.throws(() => new data.DataLoader(dataset(), { batchSampler, batchSize: 2 }), /mutually exclusive/);
    assert.throws(() => new data.DataLoader(dataset(), { sampler: new data.SequentialSampler(dataset()), shuffle: true }), /mutually exclusive with shuffle/);
    assert.throws(() => new data.DataLoader(dataset(), { batchSize: 0 }), /batchSize must be a positive integer/);
  });
});

class Records extends data.Dataset<{ image: Tensor; label: number; weight: number; name: string }> {
  get length() {
    return 5;
  }
  getItem(i: number) {
    return { image: tensor([i, 10 - i]), label: i % 3, weight: i / 2, name: `item${i}` };
  }
}

describe("collate", () => {
  it("stacks tensors and makes tensors of numbers, key by key, like default_collate", () => {
    const [batch] = [...new data.DataLoader(new Records(), { batchSize: 3 })];
    assert.deepEqual(batch.image.toArray(), stack([tensor([0, 10]), tensor([1, 9]), tensor([2, 8])]).toArray());
    assert.equal(batch.label.dtype, "int32");
    assert.deepEqual(batch.label.toArray(), [0, 1, 2]);
    assert.equal(batch.weight.dtype, "float32");
    assert.deepEqual(batch.weight.toArray(), [0, 0.5, 1]);
    assert.deepEqual(batch.name, ["item0", "item1", "item2"]);
  });

  it("collates tuples position by position and typed arrays into a stacked tensor", () => {
    const out = data.defaultCollate([
      [Float32Array.from([1, 2]), 3],
      [Float32Array.from([4, 5]), 6],
    ]) as Tensor[];
    assert.deepEqual(out[0].toArray(), [[1, 2], [4, 5]]);
    assert.deepEqual(out[1].toArray(), [3, 6]);
    assert.throws(() => data.defaultCollate([[1, 2], [3]]), /array of 2 elements/);
  });

  it("uses a custom collateFn", () => {
    const loader = new data.DataLoader(new Records(), { batchSize: 2, collateFn: (items) => items.map((s) => s.name).join("+") });
    assert.deepEqual([...loader], ["item0+item1", "item2+item3", "item4"]);
  });
});

describe("async iteration and workers", () => {
  const collect = async (loader: data.DataLoader) => {
    const out: number[][][] = [];
    for await (const [x] of loader as AsyncIterable<Tensor[]>) out.push(rows(x));
    return out;
  };

  it("worker threads gather the same batches as the synchronous loop, in order", async () => {
    const big = new data.TensorDataset(arange(4000 * 7, undefined, 1, { dtype: "float32" }).reshape([4000, 7]), arange(4000));
    const sync = [...new data.DataLoader(big, { batchSize: 64, shuffle: true, generator: new Generator(3) })].map((b) => rows((b as Tensor[])[0]));
    const withWorkers = await collect(new data.DataLoader(big, { batchSize: 64, shuffle: true, generator: new Generator(3), numWorkers: 2, prefetchFactor: 3 }));
    assert.equal(withWorkers.length, Math.ceil(4000 / 64));
    assert.deepEqual(withWorkers, sync);
  });

  it("works through a Subset, and stops cleanly when the loop breaks early", async () => {
    const [train] = data.randomSplit(dataset(), [0.7, 0.3], new Generator(1));
    const expected = [...new data.DataLoader(train, { batchSize: 2 })].map((b) => rows((b as Tensor[])[0]));
    assert.deepEqual(await collect(new data.DataLoader(train, { batchSize: 2, numWorkers: 1 })), expected);
    for await (const batch of new data.DataLoader(train, { batchSize: 2, numWorkers: 1 })) {
      assert.ok(batch);
      break;
    }
  });

  it("a step longer than timeoutMs does not time out batches that were ready meanwhile", async () => {
    const loader = new data.DataLoader(dataset(), { batchSize: 5, numWorkers: 1, timeoutMs: 1500 });
    let batches = 0;
    for await (const batch of loader) {
      assert.ok(batch);
      const until = performance.now() + 1600;
      while (performance.now() < until) {
        // a slow synchronous training step
      }
      batches++;
    }
    assert.equal(batches, 2);
  });

  it("datasets that cannot cross threads are built on the main thread", async () => {
    const out: string[][] = [];
    for await (const batch of new data.DataLoader(new Records(), { batchSize: 2, numWorkers: 2 })) out.push(batch.name);
    assert.deepEqual(out, [["item0", "item1"], ["item2", "item3"], ["item4"]]);
  });
});

describe("datasets and samplers", () => {
  it("randomSplit makes disjoint subsets covering the dataset, by counts or fractions", () => {
    const parts = data.randomSplit(dataset(), [3, 7], new Generator(0));
    assert.deepEqual(parts.map((p) => p.length), [3, 7]);
    const seen = parts.flatMap((p) => p.indices);
    assert.deepEqual([...seen].sort((a, b) => a - b), [...Array(N).keys()]);
    assert.deepEqual(data.randomSplit(dataset(), [0.5, 0.3, 0.2]).map((p) => p.length), [5, 3, 2]);
    assert.deepEqual(data.randomSplit(dataset(), [1 / 3, 1 / 3, 1 / 3]).map((p) => p.length), [4, 3, 3]);
    assert.throws(() => data.randomSplit(dataset(), [3, 3]), /summing to the dataset's length 10/);
  });

  it("TensorDataset checks its tensors and indices", () => {
    assert.throws(() => new data.TensorDataset(xs(), arange(3)), /same first dim/);
    assert.throws(() => dataset().getItem(10), /index 10 is out of range for a dataset of 10 items/);
    assert.deepEqual(dataset().getItem(-1)[0].toArray(), [27, 28, 29]);
  });

  it("RandomSampler with replacement draws numSamples indices in range", () => {
    const s = new data.RandomSampler({ length: 4 }, { replacement: true, numSamples: 50, generator: new Generator(2) });
    const drawn = [...s];
    assert.equal(drawn.length, 50);
    assert.ok(drawn.every((i) => i >= 0 && i < 4));
    assert.equal(new Set(drawn).size, 4);
  });

  it("BatchSampler groups any sampler's indices", () => {
    const b = new data.BatchSampler(new data.SubsetRandomSampler([5, 6, 7], { generator: new Generator(1) }), 2);
    const batches = [...b];
    assert.equal(b.length, 2);
    assert.deepEqual(batches.flat().sort(), [5, 6, 7]);
  });
});
