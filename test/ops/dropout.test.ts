// dropout: the mask and scale are checked against their definition, not against a saved run.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { grad } from "../../src/autograd/index.js";
import * as rt from "../../src/index.js";
import { dropout } from "../../src/ops/dropout.js";

describe("dropout", () => {
  it("zeroes about p of the elements and scales the survivors by 1/(1-p)", () => {
    const x = rt.ones([100, 100]);
    const y = Array.from(dropout(x, 0.3, { generator: new rt.Generator(1) }).data());
    const zeros = y.filter((v) => v === 0).length;
    // 10 000 Bernoulli(0.3) draws: the count is within 5 standard deviations (≈ 46) of 3 000.
    assert.ok(Math.abs(zeros - 3000) < 230, `${zeros} zeros`);
    const scale = Math.fround(1 / 0.7);
    assert.ok(y.every((v) => v === 0 || v === scale), "survivors are scaled by 1/(1-p)");
  });

  it("passes the gradient through the same mask and scale", () => {
    const x = rt.randn([50], { generator: new rt.Generator(2), requiresGrad: true });
    const y = dropout(x, 0.5, { generator: new rt.Generator(3) });
    const [g] = grad(y, [x], rt.ones([50]));
    const yv = Array.from(y.data());
    const xv = Array.from(x.data());
    Array.from(g!.data()).forEach((gv, i) => assert.equal(gv, yv[i] === 0 && xv[i] !== 0 ? 0 : 2, `element ${i}`));
  });

  it("is the identity when p is 0 or not training, and all zeros when p is 1", () => {
    const x = rt.tensor([1, -2, 3]);
    assert.equal(dropout(x, 0), x);
    assert.equal(dropout(x, 0.9, { training: false }), x);
    assert.deepEqual(Array.from(dropout(x, 1).data()), [0, -0, 0]);
  });

  it("draws the same mask from the same seed", () => {
    const x = rt.ones([20]);
    const a = Array.from(dropout(x, 0.5, { generator: new rt.Generator(9) }).data());
    const b = Array.from(dropout(x, 0.5, { generator: new rt.Generator(9) }).data());
    assert.deepEqual(a, b);
  });

  it("rejects a probability outside [0, 1]", () => {
    assert.throws(() => dropout(rt.ones([2]), 1.5), /dropout: the probability p must be in \[0, 1\], got 1.5/);
  });
});
