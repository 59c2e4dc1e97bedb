// randperm, multinomial and bernoulli: distributional properties on the seeded generator and
// reproducibility, not PyTorch's exact stream (a different generator).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";

/** |observed − expected| within `sigmas` standard deviations of a binomial count. */
function assertBinomial(count: number, n: number, p: number, what: string, sigmas = 5): void {
  const sd = Math.sqrt(n * p * (1 - p));
  assert.ok(Math.abs(count - n * p) <= sigmas * sd + 1e-9, `${what}: ${count} of ${n}, expected about ${n * p} (± ${(sigmas * sd).toFixed(1)})`);
}

describe("randperm", () => {
  it("returns a permutation of 0..n-1 as int32", () => {
    const p = rt.randperm(50, { generator: new rt.Generator(1) });
    assert.equal(p.dtype, "int32");
    assert.deepEqual([...(p.data() as Int32Array)].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i));
    assert.deepEqual(rt.randperm(0).shape, [0]);
    assert.equal(rt.randperm(4, { dtype: "float64" }).dtype, "float64");
  });

  it("is reproducible from a seed and differs between seeds", () => {
    const a = rt.randperm(20, { generator: new rt.Generator(7) }).toArray();
    assert.deepEqual(rt.randperm(20, { generator: new rt.Generator(7) }).toArray(), a);
    assert.notDeepEqual(rt.randperm(20, { generator: new rt.Generator(8) }).toArray(), a);
    rt.manualSeed(3);
    const b = rt.randperm(20).toArray();
    rt.manualSeed(3);
    assert.deepEqual(rt.randperm(20).toArray(), b);
  });

  it("puts every value at every position about equally often", () => {
    const n = 5;
    const trials = 20000;
    const gen = new rt.Generator(11);
    const counts = new Array<number>(n * n).fill(0);
    for (let t = 0; t < trials; t++) {
      const p = rt.randperm(n, { generator: gen }).data() as Int32Array;
      for (let i = 0; i < n; i++) counts[i * n + p[i]]++;
    }
    counts.forEach((c, k) => assertBinomial(c, trials, 1 / n, `value ${k % n} at position ${Math.floor(k / n)}`));
  });

  it("rejects a bad n or option", () => {
    assert.throws(() => rt.randperm(-1), /non-negative integer/);
    assert.throws(() => rt.randperm(2.5), /non-negative integer/);
    assert.throws(() => rt.randperm(3, { seed: 1 } as never), /unknown option "seed"/);
  });
});

describe("multinomial", () => {
  const weights = rt.tensor([1, 0, 3, 6]);

  it("with replacement draws categories in proportion to their weights", () => {
    const n = 20000;
    const s = rt.multinomial(weights, n, true, { generator: new rt.Generator(5) });
    assert.deepEqual(s.shape, [n]);
    const counts = [0, 0, 0, 0];
    for (const v of s.data() as Int32Array) counts[v]++;
    assert.equal(counts[1], 0, "a zero weight is never drawn");
    [0.1, 0, 0.3, 0.6].forEach((p, c) => p > 0 && assertBinomial(counts[c], n, p, `category ${c}`));
  });

  it("without replacement draws distinct categories, never a zero weight, first draw in proportion", () => {
    const gen = new rt.Generator(9);
    const trials = 6000;
    const first = [0, 0, 0, 0];
    for (let t = 0; t < trials; t++) {
      const s = [...(rt.multinomial(weights, 3, false, { generator: gen }).data() as Int32Array)];
      assert.equal(new Set(s).size, 3);
      assert.ok(!s.includes(1));
      first[s[0]]++;
    }
    [0.1, 0, 0.3, 0.6].forEach((p, c) => p > 0 && assertBinomial(first[c], trials, p, `first draw ${c}`));
  });

  it("draws per row for 2-D weights and is reproducible from a seed", () => {
    const w = rt.tensor([[0, 0, 1], [1, 0, 0]]);
    assert.deepEqual(rt.multinomial(w, 2, true).toArray(), [[2, 2], [0, 0]]);
    const w2 = rt.rand([3, 10], { generator: new rt.Generator(0) });
    const a = rt.multinomial(w2, 4, false, { generator: new rt.Generator(2) });
    assert.deepEqual(a.shape, [3, 4]);
    assert.deepEqual(rt.multinomial(w2, 4, false, { generator: new rt.Generator(2) }).toArray(), a.toArray());
    assert.notDeepEqual(rt.multinomial(w2, 4, false, { generator: new rt.Generator(3) }).toArray(), a.toArray());
  });

  it("rejects negative, non-finite or all-zero weights and too many samples without replacement", () => {
    assert.throws(() => rt.multinomial(rt.tensor([1, -1]), 1), /finite and non-negative/);
    assert.throws(() => rt.multinomial(rt.tensor([1, NaN]), 1), /finite and non-negative/);
    assert.throws(() => rt.multinomial(rt.tensor([0, 0]), 1), /sums to 0/);
    assert.throws(() => rt.multinomial(weights, 4), /only 3 non-zero weights/);
    assert.throws(() => rt.multinomial(rt.tensor([1, 2], { dtype: "int32" }), 1), /float32 or float64/);
    assert.throws(() => rt.multinomial(weights, 0), /positive integer/);
  });
});

describe("bernoulli", () => {
  it("draws 1 with the probability held in each element", () => {
    const n = 20000;
    const probs = rt.cat([rt.full([n], 0.2), rt.full([n], 0.7), rt.zeros([100]), rt.ones([100])]);
    const s = rt.bernoulli(probs, { generator: new rt.Generator(4) }).data();
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) a += s[i];
    for (let i = n; i < 2 * n; i++) b += s[i];
    assertBinomial(a, n, 0.2, "p = 0.2");
    assertBinomial(b, n, 0.7, "p = 0.7");
    for (let i = 2 * n; i < 2 * n + 100; i++) assert.equal(s[i], 0);
    for (let i = 2 * n + 100; i < 2 * n + 200; i++) assert.equal(s[i], 1);
  });

  it("takes a number p as the second argument and keeps the dtype", () => {
    const s = rt.bernoulli(rt.zeros([10000], { dtype: "float64" }), 0.4, { generator: new rt.Generator(6) });
    assert.equal(s.dtype, "float64");
    assertBinomial(s.sum().item(), 10000, 0.4, "p = 0.4");
    assert.equal(rt.zeros([3]).bernoulli(1).sum().item(), 3);
  });

  it("is reproducible from a seed", () => {
    const p = rt.full([64], 0.5);
    assert.deepEqual(rt.bernoulli(p, { generator: new rt.Generator(1) }).toArray(), rt.bernoulli(p, { generator: new rt.Generator(1) }).toArray());
  });

  it("rejects probabilities outside [0, 1]", () => {
    assert.throws(() => rt.bernoulli(rt.tensor([0.5, 1.5])), /in \[0, 1\], got 1.5 at flat position 1/);
    assert.throws(() => rt.bernoulli(rt.zeros([2]), 2), /p must be a probability/);
    assert.throws(() => rt.bernoulli(rt.zeros([2], { dtype: "int32" })), /float32 or float64/);
  });
});
