import type { MathOp } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { broadcastShapes } from "../tensor/shape.js";
import { resultType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { add, div, eq, mul, neg, reciprocal, rsqrt, sub, where } from "./elementwise.js";
import { installMethods } from "./install.js";
import { sumToShape } from "./reduction.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { expand } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    sin(): Tensor;
    cos(): Tensor;
    tan(): Tensor;
    asin(): Tensor;
    acos(): Tensor;
    atan(): Tensor;
    sinh(): Tensor;
    cosh(): Tensor;
    asinh(): Tensor;
    acosh(): Tensor;
    atanh(): Tensor;
    log1p(): Tensor;
    expm1(): Tensor;
    atan2(other: Tensor): Tensor;
  }
}

/** Integer and bool inputs compute in float32, as PyTorch's default dtype does. */
function floatInput(x: Tensor): Tensor {
  return x.dtype === "float32" || x.dtype === "float64" ? x : to(x.detach(), "float32");
}

function mathRaw(op: MathOp, x: Tensor): Tensor {
  const src = contiguousData(x);
  const out = emptyTensor(x.dtype, x.shape);
  getBackend().unaryMath(op, src.storage.data, src.offset, out.storage.data, x.numel);
  return out;
}

/**
 * A differentiable transcendental function. The derivative is a formula of public ops of the input
 * x (or the output y), so double backward works; the formulas are PyTorch's (derivatives.yaml).
 */
function mathOp(op: MathOp, name: string, derivative: (g: Tensor, x: Tensor, y: Tensor) => Tensor) {
  const fn = (input: Tensor): Tensor => {
    assertTensor(input, op);
    if (input.dtype === "bfloat16") return inFloat32(fn, [input]);
    const x = floatInput(input);
    const y = mathRaw(op, x);
    // y itself (not detached) goes into the formula, so a recorded backward differentiates through it.
    return record(y, name, [x], (g) => [derivative(g, x, y)], [x]);
  };
  return fn;
}

const oneMinusSquare = (x: Tensor) => sub(1, mul(x, x));

export const sin = mathOp("sin", "SinBackward", (g, x) => mul(g, cos(x)));
export const cos = mathOp("cos", "CosBackward", (g, x) => neg(mul(g, sin(x))));
export const tan = mathOp("tan", "TanBackward", (g, _x, y) => mul(g, add(mul(y, y), 1)));
export const asin = mathOp("asin", "AsinBackward", (g, x) => mul(g, rsqrt(oneMinusSquare(x))));
export const acos = mathOp("acos", "AcosBackward", (g, x) => neg(mul(g, rsqrt(oneMinusSquare(x)))));
export const atan = mathOp("atan", "AtanBackward", (g, x) => div(g, add(mul(x, x), 1)));
export const sinh = mathOp("sinh", "SinhBackward", (g, x) => mul(g, cosh(x)));
export const cosh = mathOp("cosh", "CoshBackward", (g, x) => mul(g, sinh(x)));
export const asinh = mathOp("asinh", "AsinhBackward", (g, x) => mul(g, rsqrt(add(mul(x, x), 1))));
export const acosh = mathOp("acosh", "AcoshBackward", (g, x) => mul(g, rsqrt(sub(mul(x, x), 1))));
export const atanh = mathOp("atanh", "AtanhBackward", (g, x) => mul(g, reciprocal(oneMinusSquare(x))));
export const log1p = mathOp("log1p", "Log1pBackward", (g, x) => div(g, add(x, 1)));
export const expm1 = mathOp("expm1", "Expm1Backward", (g, _x, y) => mul(g, add(y, 1)));

/** torch.atan2(input, other): the angle of (other, input), elementwise with broadcasting. */
export function atan2(input: Tensor, other: Tensor): Tensor {
  if (hasBFloat16(input, other)) return inFloat32(atan2, [input, other]);
  assertTensor(input, "atan2");
  assertTensor(other, "atan2", "other");
  // torch.result_type: a 0-d float64 beside a dimensioned float32 gives float32.
  let dtype = resultType([input, other]);
  if (dtype !== "float32" && dtype !== "float64") dtype = "float32";
  const a = to(input, dtype);
  const b = to(other, dtype);
  const shape = broadcastShapes(a.shape, b.shape, "atan2");
  const ac = contiguousData(expand(a.detach(), shape));
  const bc = contiguousData(expand(b.detach(), shape));
  const out = emptyTensor(dtype, shape);
  getBackend().atan2(ac.storage.data, ac.offset, bc.storage.data, bc.offset, out.storage.data, out.numel);
  return record(
    out,
    "Atan2Backward",
    [a, b],
    (g) => {
      // d/da atan2(a, b) = b/(a²+b²), d/db = −a/(a²+b²); PyTorch masks the infinite 1/(a²+b²) at
      // the origin to 0, so the gradient there is 0 (not NaN).
      // The squares are taken in the inputs' own dtypes, as PyTorch does (a float32 1e30 squares to inf).
      const raw = reciprocal(add(mul(input, input), mul(other, other)));
      const recip = where(eq(raw, Infinity), 0, raw);
      return [a.requiresGrad ? sumToShape(mul(mul(g, b), recip), a.shape) : null, b.requiresGrad ? sumToShape(mul(mul(g, neg(a)), recip), b.shape) : null];
    },
    [a, b],
  );
}

installMethods({ sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log1p, expm1, atan2 });
