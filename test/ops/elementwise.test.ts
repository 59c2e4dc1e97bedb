// Elementwise arithmetic and activations against PyTorch fixtures, plus float64 gradchecks.
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { describeFixture, num } from "./fixture_harness.js";

type Binary = (a: Tensor | number, b: Tensor | number) => Tensor;

function binaryCall(fn: Binary) {
  return ({ a, b }: Record<string, Tensor>, p: Record<string, unknown>): Tensor => {
    if (p.self !== undefined) return fn(num(p.self), b);
    if (p.other !== undefined) return fn(a, num(p.other));
    // alpha scales the second operand, as torch.add(a, b, alpha=…).
    return fn(a, p.alpha !== undefined ? rt.mul(b, num(p.alpha)) : b);
  };
}

describeFixture("add", binaryCall(rt.add));
describeFixture("sub", binaryCall(rt.sub));
describeFixture("mul", binaryCall(rt.mul));
describeFixture("div", binaryCall(rt.div));
describeFixture(
  "pow",
  ({ a, b }, p) => (p.self !== undefined ? rt.pow(num(p.self), b) : p.exponent !== undefined ? rt.pow(a, num(p.exponent)) : rt.pow(a, b)),
  // x ** 0 is constant but its fixture gradient is 0; x=0 with exponent 2 sits where the formula is exact.
  { noGradcheck: ["zero_base_edges"], float32: { atol: 1e-6, rtol: 2e-5 } },
);

const unary: [string, (x: Tensor) => Tensor][] = [
  ["neg", rt.neg],
  ["sqrt", rt.sqrt],
  ["rsqrt", rt.rsqrt],
  ["exp", rt.exp],
  ["log", rt.log],
  ["abs", rt.abs],
  ["tanh", rt.tanh],
  ["sigmoid", rt.sigmoid],
  ["relu", rt.relu],
  ["silu", rt.silu],
];
for (const [op, fn] of unary) {
  describeFixture(op, ({ x }) => fn(x), { noGradcheck: ["at_zero"], float32: { atol: 1e-6, rtol: 2e-6 } });
}

describeFixture("gelu", ({ x }, p) => rt.gelu(x, p.approximate), { float32: { atol: 1e-6, rtol: 2e-6 } });
describeFixture("clamp", ({ x }, p) => rt.clamp(x, p.min === null ? null : num(p.min), p.max === null ? null : num(p.max)), {
  noGradcheck: ["at_bounds", "min_above_max"],
});
