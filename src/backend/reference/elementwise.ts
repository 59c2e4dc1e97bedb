import type { BinaryOp, StridedView, TypedArray, UnaryGradOp, UnaryOp } from "../backend.js";
import { encoderFor } from "./convert.js";
import { erf } from "./erf.js";
import { offsetsOf } from "./strided.js";

const SQRT1_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);
/** √(2/π), the constant of the tanh approximation of gelu. */
const GELU_TANH_BETA = Math.sqrt(2 / Math.PI);
const GELU_TANH_KAPPA = 0.044715;

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

function unaryFn(op: UnaryOp, p0: number, p1: number): (x: number) => number {
  switch (op) {
    case "neg": return (x) => -x;
    case "abs": return (x) => Math.abs(x);
    case "sqrt": return (x) => Math.sqrt(x);
    case "rsqrt": return (x) => 1 / Math.sqrt(x);
    case "exp": return (x) => Math.exp(x);
    case "log": return (x) => Math.log(x);
    case "tanh": return (x) => Math.tanh(x);
    case "sigmoid": return sigmoid;
    // x > 0 rather than max(x, 0) so that NaN passes through as in PyTorch.
    case "relu": return (x) => (x > 0 || Number.isNaN(x) ? x : 0);
    case "gelu": return (x) => 0.5 * x * (1 + erf(x * SQRT1_2));
    case "gelu_tanh": return (x) => 0.5 * x * (1 + Math.tanh(GELU_TANH_BETA * (x + GELU_TANH_KAPPA * x * x * x)));
    case "silu": return (x) => x * sigmoid(x);
    // sign(NaN) is 0 in PyTorch (it computes (0 < x) - (x < 0)).
    case "sign": return (x) => (x > 0 ? 1 : x < 0 ? -1 : 0);
    case "reciprocal": return (x) => 1 / x;
    case "square": return (x) => x * x;
    case "pow_scalar": return (x) => cPow(x, p0);
    case "clamp": return (x) => Math.min(Math.max(x, p0), p1);
    case "add_scalar": return (x) => x + p0;
    case "mul_scalar": return (x) => x * p0;
    case "rsub_scalar": return (x) => p0 - x;
    case "rdiv_scalar": return (x) => p0 / x;
  }
}

export function unary(op: UnaryOp, x: TypedArray, xOffset: number, out: TypedArray, n: number, p0 = 0, p1 = 0): void {
  const f = unaryFn(op, p0, p1);
  for (let i = 0; i < n; i++) out[i] = f(x[xOffset + i]);
}

/** d op / d input as a function of the saved value (x or y, per UnaryGradOp). */
function derivativeFn(op: UnaryGradOp, p0: number, p1: number): (saved: number) => number {
  switch (op) {
    // PyTorch masks with `result <= 0`, so a NaN input lets the gradient through.
    case "relu": return (x) => (x <= 0 ? 0 : 1);
    case "gelu": return (x) => 0.5 * (1 + erf(x * SQRT1_2)) + x * INV_SQRT_2PI * Math.exp(-0.5 * x * x);
    case "gelu_tanh": return (x) => {
      const t = Math.tanh(GELU_TANH_BETA * (x + GELU_TANH_KAPPA * x * x * x));
      const dInner = GELU_TANH_BETA * (1 + 3 * GELU_TANH_KAPPA * x * x);
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dInner;
    };
    case "silu": return (x) => {
      const s = sigmoid(x);
      return s * (1 + x * (1 - s));
    };
    case "abs": return (x) => (x > 0 ? 1 : x < 0 ? -1 : 0);
    // PyTorch defines the gradient of x**0 as 0 everywhere (not 0 * x**-1, which is NaN at 0).
    case "pow_scalar": return (x) => (p0 === 0 ? 0 : p0 * cPow(x, p0 - 1));
    case "clamp": return (x) => (x >= p0 && x <= p1 ? 1 : 0);
    case "tanh": return (y) => 1 - y * y;
    case "sigmoid": return (y) => y * (1 - y);
    case "exp": return (y) => y;
    case "sqrt": return (y) => 1 / (2 * y);
    case "rsqrt": return (y) => -0.5 * y * y * y;
    case "reciprocal": return (y) => -y * y;
  }
}

export function unaryGrad(
  op: UnaryGradOp,
  grad: TypedArray,
  saved: TypedArray,
  savedOffset: number,
  out: TypedArray,
  n: number,
  p0 = 0,
  p1 = 0,
): void {
  const d = derivativeFn(op, p0, p1);
  // Ops whose derivative is a 0/1 mask select the gradient rather than multiply by it, so that
  // an infinite gradient where the mask is 0 gives 0, as PyTorch's masked backward kernels do.
  const masked = op === "relu" || op === "clamp";
  for (let i = 0; i < n; i++) {
    const dv = d(saved[savedOffset + i]);
    out[i] = masked ? (dv === 0 ? 0 : grad[i]) : grad[i] * dv;
  }
}

function binaryFn(op: BinaryOp, integer: boolean): (a: number, b: number) => number {
  switch (op) {
    case "add": return (a, b) => a + b;
    case "sub": return (a, b) => a - b;
    case "mul": return integer ? (a, b) => Math.imul(a, b) : (a, b) => a * b;
    // Integer division truncates, as torch.div(..., rounding_mode="trunc"); ops/ decides when to use it.
    case "div": return integer ? (a, b) => Math.trunc(a / b) : (a, b) => a / b;
    case "pow": return cPow;
    // Math.max/min propagate NaN, as torch.maximum/minimum do.
    case "maximum": return (a, b) => Math.max(a, b);
    case "minimum": return (a, b) => Math.min(a, b);
    case "eq": return (a, b) => (a === b ? 1 : 0);
    case "ne": return (a, b) => (a !== b ? 1 : 0);
    case "lt": return (a, b) => (a < b ? 1 : 0);
    case "le": return (a, b) => (a <= b ? 1 : 0);
    case "gt": return (a, b) => (a > b ? 1 : 0);
    case "ge": return (a, b) => (a >= b ? 1 : 0);
    case "logical_and": return (a, b) => (a !== 0 && b !== 0 ? 1 : 0);
    case "logical_or": return (a, b) => (a !== 0 || b !== 0 ? 1 : 0);
  }
}

export function binary(op: BinaryOp, a: StridedView, b: StridedView, shape: readonly number[], out: TypedArray): void {
  const integer = a.data instanceof Int32Array;
  const f = binaryFn(op, integer);
  const encode = encoderFor(out);
  const aOffsets = offsetsOf(a, shape);
  const bOffsets = offsetsOf(b, shape);
  for (let i = 0; i < aOffsets.length; i++) out[i] = encode(f(a.data[aOffsets[i]], b.data[bOffsets[i]]));
}

export function where(cond: StridedView, a: StridedView, b: StridedView, shape: readonly number[], out: TypedArray): void {
  const cOffsets = offsetsOf(cond, shape);
  const aOffsets = offsetsOf(a, shape);
  const bOffsets = offsetsOf(b, shape);
  for (let i = 0; i < cOffsets.length; i++) {
    out[i] = cond.data[cOffsets[i]] !== 0 ? a.data[aOffsets[i]] : b.data[bOffsets[i]];
  }
}

/** C's pow: 1 ** y and x ** 0 are 1 and (−1) ** ±inf is 1 (JavaScript's ** gives NaN for those). */
function cPow(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}
