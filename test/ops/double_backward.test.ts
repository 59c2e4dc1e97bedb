// Second derivatives: the gradient computed with createGraph is itself checked by finite
// differences, which exercises each op's backward formula written in public ops.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { grad, gradcheck } from "../../src/autograd/index.js";
import { firstDerivative } from "./double_backward_support.js";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { embedding } from "../../src/ops/embedding.js";
import { max } from "../../src/ops/extrema.js";
import { gather, scatterAdd } from "../../src/ops/gather.js";
import { cat, split } from "../../src/ops/join.js";
import { crossEntropy } from "../../src/ops/loss.js";
import { layerNorm } from "../../src/ops/norm.js";
import { logSoftmax, softmax } from "../../src/ops/softmax.js";
import { variance } from "../../src/ops/statistics.js";
import { tril } from "../../src/ops/triangle.js";

const gen = new rt.Generator(7);
const input = (shape: number[]) => rt.randn(shape, { dtype: "float64", generator: gen, requiresGrad: true });
const weights = (shape: readonly number[]) => rt.randn([...shape], { dtype: "float64", generator: gen });

const cases: [string, (...xs: Tensor[]) => Tensor, number[][]][] = [
  ["softmax over the last dim", (x) => softmax(x, -1), [[3, 4]]],
  ["softmax over a middle dim", (x) => softmax(x, 1), [[2, 3, 2]]],
  ["logSoftmax", (x) => logSoftmax(x, 0), [[4, 3]]],
  ["layerNorm with weight and bias", (x, w, b) => layerNorm(x, [4], w, b, 1e-5), [[3, 4], [4], [4]]],
  ["layerNorm without affine", (x) => layerNorm(x, [2, 3], null, null, 1e-5), [[2, 2, 3]]],
  ["variance", (x) => variance(x, 1), [[3, 4]]],
  ["gather", (x) => gather(x.mul(x), 1, rt.tensor([[0, 2], [1, 1]], { dtype: "int32" })), [[2, 3]]],
  ["scatterAdd", (x, s) => scatterAdd(x.mul(x), 0, rt.tensor([[1, 0, 1]], { dtype: "int32" }), s.mul(s)), [[2, 3], [1, 3]]],
  ["max along a dim", (x) => max(x.mul(x), 1).values, [[3, 4]]],
  ["cat and split", (a, b) => cat([a.mul(b), ...split(b.mul(b), 1, 1)], 1), [[2, 2], [2, 2]]],
  ["embedding", (w) => embedding(rt.tensor([2, 0, 2], { dtype: "int32" }), w.mul(w)), [[3, 2]]],
  ["tril", (x) => tril(x.mul(x), 0), [[3, 3]]],
  [
    "crossEntropy with label smoothing",
    (x) => crossEntropy(x, rt.tensor([1, 0, 2], { dtype: "int32" }), { labelSmoothing: 0.1 }),
    [[3, 4]],
  ],
];

describe("double backward", () => {
  for (const [name, f, shapes] of cases) {
    it(`${name}: the createGraph gradient passes gradcheck`, () => {
      const xs = shapes.map(input);
      const shapeOf = (...ys: Tensor[]) => rt.noGrad(() => f(...ys).shape);
      assert.ok(gradcheck(firstDerivative(f, shapeOf, gen), xs));
    });
  }

  it("the createGraph gradient of softmax equals the fused one", () => {
    const x = input([3, 5]);
    const w = weights([3, 5]);
    const [fused] = grad(softmax(x, 1), [x], w);
    const [recorded] = grad(softmax(x, 1), [x], w, { createGraph: true });
    const a = Array.from(fused!.data());
    const b = Array.from(recorded!.data());
    a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) < 1e-12, `element ${i}: ${v} vs ${b[i]}`));
  });

  it("the createGraph gradient of layerNorm equals the fused one", () => {
    const [x, wt, b] = [input([2, 4]), input([4]), input([4])];
    const w = weights([2, 4]);
    const fused = grad(layerNorm(x, [4], wt, b), [x, wt, b], w);
    const recorded = grad(layerNorm(x, [4], wt, b), [x, wt, b], w, { createGraph: true });
    fused.forEach((g, k) => {
      const a = Array.from(g!.data());
      const r = Array.from(recorded[k]!.data());
      a.forEach((v, i) => assert.ok(Math.abs(v - r[i]) < 1e-12, `input ${k} element ${i}: ${v} vs ${r[i]}`));
    });
  });
});
