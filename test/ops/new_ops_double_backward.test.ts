// Second derivatives of the new ops: the createGraph gradient is itself checked by finite
// differences, which exercises each backward formula written in public ops.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gradcheck } from "../../src/autograd/index.js";
import { firstDerivative } from "./double_backward_support.js";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";

const gen = new rt.Generator(17);
const input = (shape: number[]) => rt.randn(shape, { dtype: "float64", generator: gen, requiresGrad: true });
const idx = (values: number[][] | number[]) => rt.tensor(values as number[][], { dtype: "int32" });

// Keeps |x| below 1 without tanh, whose own double backward is not under test here.
const unit = (x: Tensor) => x.mul(0.2);
const cases: [string, (...xs: Tensor[]) => Tensor, number[][]][] = [
  ["sin, cos, tan", (x) => x.sin().mul(x.cos()).add(unit(x).tan()), [[3, 2]]],
  ["asin, acos, atan", (x) => unit(x).asin().add(unit(x).acos().mul(x)).add(x.atan()), [[4]]],
  ["sinh, cosh, asinh, acosh, atanh", (x) => x.sinh().add(x.cosh()).add(x.asinh()).add(x.abs().add(1.2).acosh()).add(unit(x).atanh()), [[5]]],
  ["log1p, expm1", (x) => x.abs().log1p().mul(x.expm1()), [[4]]],
  ["atan2", (a, b) => rt.atan2(a, b), [[2, 3], [3]]],
  ["logsumexp", (x) => rt.logsumexp(x, 1), [[3, 4]]],
  ["amax", (x) => rt.amax(x.mul(x), [0, 1]), [[2, 3]]],
  ["vectorNorm ord 2", (x) => rt.linalg.vectorNorm(x, 2, 1), [[3, 4]]],
  ["vectorNorm ord 3", (x) => rt.linalg.vectorNorm(x, 3), [[5]]],
  ["vectorNorm ord 1.5 over dims", (x) => rt.linalg.vectorNorm(x, 1.5, [0, 2], true), [[2, 3, 2]]],
  ["nllLoss with weight", (x) => rt.nllLoss(rt.logSoftmax(x, 1), idx([1, 0, 2]), { weight: rt.tensor([1, 2, 0.5], { dtype: "float64" }) }), [[3, 3]]],
  ["binaryCrossEntropy", (x) => rt.binaryCrossEntropy(x.mul(0.1).add(0.5), rt.tensor([1, 0, 0.3], { dtype: "float64" })), [[3]]],
  [
    "binaryCrossEntropyWithLogits with posWeight",
    (x, t) => rt.binaryCrossEntropyWithLogits(x, t.mul(0.1).add(0.5), { posWeight: rt.tensor([2, 0.5], { dtype: "float64" }) }),
    [[3, 2], [3, 2]],
  ],
  ["scatter", (x, s) => rt.scatter(x.mul(x), 1, idx([[2, 0]]), s.mul(s)), [[2, 3], [1, 2]]],
  ["scatterReduce mean", (x, s) => rt.scatterReduce(x.mul(x), 0, idx([0, 0, 2]), s.mul(s), "mean"), [[3], [3]]],
  ["scatterReduce prod", (x, s) => rt.scatterReduce(x, 0, idx([0, 0, 2]), s, "prod"), [[3], [3]]],
  ["sort values", (x) => rt.sort(x.mul(x), 1).values, [[2, 4]]],
  ["topk values", (x) => rt.topk(x.mul(x), 2, 0).values, [[4, 2]]],
  ["cumsum", (x) => rt.cumsum(x.mul(x), 1), [[2, 4]]],
  ["cumprod", (x) => rt.cumprod(x, 0), [[4, 2]]],
  ["flip and roll", (x) => rt.roll(rt.flip(x.mul(x), [1]), [1, -1], [0, 1]), [[3, 3]]],
  ["repeat", (x) => x.mul(x).repeat(2, 1, 2), [[2, 2]]],
  ["pad reflect", (x) => rt.pad(x.mul(x), [2, 1], "reflect"), [[1, 2, 4]]],
  ["pad circular", (x) => rt.pad(x.mul(x), [1, 1, 1, 0], "circular"), [[1, 3, 3]]],
  ["einsum", (a, b) => rt.einsum("bij,bjk->bik", a.mul(a), b), [[2, 2, 3], [2, 3, 2]]],
  ["einsum diagonal", (a) => rt.einsum("ii->i", a.mul(a)), [[3, 3]]],
  ["nanToNum", (x) => rt.nanToNum(x.mul(x)), [[4]]],
];

describe("double backward of the new ops", () => {
  for (const [name, f, shapes] of cases) {
    it(`${name}: the createGraph gradient passes gradcheck`, () => {
      const xs = shapes.map(input);
      const shapeOf = (...ys: Tensor[]) => rt.noGrad(() => f(...ys).shape);
      assert.ok(gradcheck(firstDerivative(f, shapeOf, gen), xs));
    });
  }
});
