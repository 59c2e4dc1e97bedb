import { test } from "node:test";
import assert from "node:assert/strict";
import { DistributedSampler } from "../../src/data/distributed_sampler.js";

const ranksOf = (n: number, world: number, opts = {}) =>
  Array.from({ length: world }, (_, rank) => new DistributedSampler(n, { numReplicas: world, rank, ...opts }));

test("without shuffle, rank r takes every world-th index and the tail is padded from the start (PyTorch's order)", () => {
  // torch: DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False) → [0,4,8], [1,5,9], [2,6,0], [3,7,1]
  assert.deepEqual(ranksOf(10, 4, { shuffle: false }).map((s) => s.indices()), [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]);
  // drop_last=True → num_samples = ceil((10-4)/4) = 2
  assert.deepEqual(ranksOf(10, 4, { shuffle: false, dropLast: true }).map((s) => s.indices()), [[0, 4], [1, 5], [2, 6], [3, 7]]);
  // A dataset smaller than the world is padded by repetition.
  assert.deepEqual(ranksOf(2, 5, { shuffle: false }).map((s) => s.indices()), [[0], [1], [0], [1], [0]]);
});

test("every rank draws the same count; in evaluation mode every index is covered exactly once", () => {
  for (const world of [1, 2, 3, 4]) {
    for (const n of [0, 1, 7, 10, 13]) {
      const counts = ranksOf(n, world).map((s) => s.indices().length);
      assert.equal(new Set(counts).size <= 1, true);
      const evalIdx = ranksOf(n, world, { evaluation: true }).flatMap((s) => s.indices());
      assert.deepEqual(evalIdx.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i), `n=${n} world=${world}`);
      ranksOf(n, world, { evaluation: true }).forEach((s) => assert.equal(s.length, s.indices().length));
    }
  }
});

test("shuffling is identical across ranks for a seed, differs per epoch, and covers the dataset", () => {
  const a = ranksOf(50, 3, { seed: 7 });
  const b = ranksOf(50, 3, { seed: 7 });
  assert.deepEqual(a.map((s) => s.indices()), b.map((s) => s.indices()));
  const epoch0 = a[0].epochIndices();
  a.forEach((s) => s.setEpoch(1));
  assert.notDeepEqual(a[0].epochIndices(), epoch0);
  assert.deepEqual([...new Set(a.flatMap((s) => s.indices()))].sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i));
  assert.notDeepEqual(ranksOf(50, 3, { seed: 8 })[0].indices(), ranksOf(50, 3, { seed: 7 })[0].indices());
});

test("a mid-epoch resume yields exactly the remaining indices", () => {
  const s = new DistributedSampler(20, { numReplicas: 2, rank: 1, seed: 3 });
  s.setEpoch(2);
  const full = s.indices();
  s.setStartIndex(4);
  const state = s.stateDict();
  const resumed = new DistributedSampler(20, { numReplicas: 2, rank: 1, seed: 3 });
  resumed.loadStateDict(state);
  assert.deepEqual(resumed.indices(), full.slice(4));
  assert.throws(() => new DistributedSampler(20, { numReplicas: 2, rank: 1, seed: 4 }).loadStateDict(state), /seed 3 differs/);
});

test("bad arguments are clear errors", () => {
  assert.throws(() => new DistributedSampler(10, { numReplicas: 2, rank: 2 }), /invalid rank 2, rank should be in the interval \[0, 1\]/);
  assert.throws(() => new DistributedSampler(10, { numReplicas: 0 }), /numReplicas must be a positive integer/);
  assert.throws(() => new DistributedSampler(10, { evaluation: true, dropLast: true }), /cannot be combined with dropLast/);
});
