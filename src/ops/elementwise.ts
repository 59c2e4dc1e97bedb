import type { BinaryOp, UnaryGradOp, UnaryOp } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { promoteTypes, promoteWithScalar, type DType } from "../tensor/dtype.js";
import { broadcastShapes, broadcastStrides, formatShape } from "../tensor/shape.js";
import { allocate } from "../tensor/storage.js";
import { Tensor, denseData } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { sumToShape } from "./reduction.js";
import { assertFloating, assertTensor, beginInPlace, contiguousData, emptyTensor, viewOf } from "./util.js";

export type Operand = Tensor | number;

const COMPARISONS = new Set<BinaryOp>(["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"]);

/** A 0-d tensor holding a scalar operand. */
export function scalarTensor(value: number, dtype: DType): Tensor {
  const t = new Tensor(allocate(dtype, 1, false), []);
  t.storage.data[0] = value;
  return t;
}

/** Brings both operands to one dtype (PyTorch promotion; a scalar adapts to the tensor). */
function operands(a: Operand, b: Operand, op: string): [Tensor, Tensor] {
  if (typeof a === "number" && typeof b === "number") throw new TypeError(`${op}: expected at least one Tensor operand, got two numbers`);
  if (typeof b === "number") {
    assertTensor(a, op);
    const dtype = promoteWithScalar(a.dtype, b);
    return [to(a, dtype), scalarTensor(b, dtype)];
  }
  assertTensor(b, op, "other");
  if (typeof a === "number") {
    const dtype = promoteWithScalar(b.dtype, a);
    return [scalarTensor(a, dtype), to(b, dtype)];
  }
  assertTensor(a, op);
  const dtype = promoteTypes(a.dtype, b.dtype);
  return [to(a, dtype), to(b, dtype)];
}

/** The forward of a binary op over broadcast shapes, recording nothing. */
function binaryRaw(op: BinaryOp, a: Tensor, b: Tensor, name: string): Tensor {
  const shape = broadcastShapes(a.shape, b.shape, name);
  const out = emptyTensor(COMPARISONS.has(op) ? "bool" : a.dtype, shape);
  const va = { data: a.storage.data, offset: a.offset, strides: broadcastStrides(a.shape, a.strides, shape) };
  const vb = { data: b.storage.data, offset: b.offset, strides: broadcastStrides(b.shape, b.strides, shape) };
  getBackend().binary(op, va, vb, shape, out.storage.data);
  return out;
}

export function add(a: Operand, b: Operand): Tensor {
  const [x, y] = operands(a, b, "add");
  const out = binaryRaw("add", x, y, "add");
  return record(out, "AddBackward", [x, y], (g) => [sumToShape(g, x.shape), sumToShape(g, y.shape)]);
}

export function sub(a: Operand, b: Operand): Tensor {
  const [x, y] = operands(a, b, "sub");
  const out = binaryRaw("sub", x, y, "sub");
  return record(out, "SubBackward", [x, y], (g) => [sumToShape(g, x.shape), y.requiresGrad ? sumToShape(neg(g), y.shape) : null]);
}

export function mul(a: Operand, b: Operand): Tensor {
  const [x, y] = operands(a, b, "mul");
  const out = binaryRaw("mul", x, y, "mul");
  return record(
    out,
    "MulBackward",
    [x, y],
    (g) => [x.requiresGrad ? sumToShape(mul(g, y), x.shape) : null, y.requiresGrad ? sumToShape(mul(g, x), y.shape) : null],
    [x, y],
  );
}

export function div(a: Operand, b: Operand): Tensor {
  let [x, y] = operands(a, b, "div");
  if (x.dtype === "int32" || x.dtype === "bool") [x, y] = [to(x, "float32"), to(y, "float32")];
  const out = binaryRaw("div", x, y, "div");
  return record(
    out,
    "DivBackward",
    [x, y],
    (g) => [x.requiresGrad ? sumToShape(div(g, y), x.shape) : null, y.requiresGrad ? sumToShape(neg(div(mul(g, x), mul(y, y))), y.shape) : null],
    [x, y],
  );
}

/** a ** b for a tensor exponent; a number exponent takes the cheaper pow_scalar path. */
export function pow(a: Operand, b: Operand): Tensor {
  if (typeof b === "number" && typeof a !== "number") return powScalar(a, b);
  const [x, y] = operands(a, b, "pow");
  const out = binaryRaw("pow", x, y, "pow");
  return record(
    out,
    "PowBackward",
    [x, y],
    (g) => {
      const gx = x.requiresGrad ? sumToShape(mul(g, mul(y, pow(x, sub(y, 1)))), x.shape) : null;
      // d/dy x^y = x^y·ln x; PyTorch defines it as 0 where x == 0 (and y >= 0) instead of NaN.
      const gy = y.requiresGrad ? sumToShape(mul(g, where(eq(x, 0), 0, mul(out.detach(), log(x)))), y.shape) : null;
      return [gx, gy];
    },
    [x, y],
  );
}

export function maximum(a: Tensor, b: Tensor): Tensor {
  return extremum("maximum", a, b);
}

export function minimum(a: Tensor, b: Tensor): Tensor {
  return extremum("minimum", a, b);
}

function extremum(op: "maximum" | "minimum", a: Tensor, b: Tensor): Tensor {
  const [x, y] = operands(a, b, op);
  const out = binaryRaw(op, x, y, op);
  return record(
    out,
    op === "maximum" ? "MaximumBackward" : "MinimumBackward",
    [x, y],
    (g) => {
      // Ties split the gradient evenly, as PyTorch does.
      const xWins = to(op === "maximum" ? gt(x, y) : lt(x, y), g.dtype);
      const tie = to(eq(x, y), g.dtype);
      const shareX = add(xWins, mul(tie, 0.5));
      return [sumToShape(mul(g, shareX), x.shape), sumToShape(mul(g, sub(1, shareX)), y.shape)];
    },
    [x, y],
  );
}

function comparison(op: BinaryOp) {
  return (a: Operand, b: Operand): Tensor => {
    const [x, y] = operands(a, b, op);
    return binaryRaw(op, x, y, op);
  };
}

export const eq = comparison("eq");
export const ne = comparison("ne");
export const lt = comparison("lt");
export const le = comparison("le");
export const gt = comparison("gt");
export const ge = comparison("ge");
export const logicalAnd = comparison("logical_and");
export const logicalOr = comparison("logical_or");

/** cond ? a : b elementwise with broadcasting (torch.where). */
export function where(cond: Tensor, a: Operand, b: Operand): Tensor {
  assertTensor(cond, "where", "condition");
  const c = cond.dtype === "bool" ? cond : ne(cond, 0);
  const [x, y] = operands(a, b, "where");
  const shape = broadcastShapes(broadcastShapes(c.shape, x.shape, "where"), y.shape, "where");
  const out = emptyTensor(x.dtype, shape);
  const view = (t: Tensor) => ({ data: t.storage.data, offset: t.offset, strides: broadcastStrides(t.shape, t.strides, shape) });
  getBackend().where(view(c), view(x), view(y), shape, out.storage.data);
  return record(
    out,
    "WhereBackward",
    [x, y],
    (g) => [x.requiresGrad ? sumToShape(where(c, g, 0), x.shape) : null, y.requiresGrad ? sumToShape(where(c, 0, g), y.shape) : null],
  );
}

export function maskedFill(t: Tensor, mask: Tensor, value: number): Tensor {
  if (mask.dtype !== "bool") throw new TypeError(`maskedFill: expected a bool mask, got ${mask.dtype} ${formatShape(mask.shape)}`);
  broadcastShapes(t.shape, mask.shape, "maskedFill");
  return where(mask, value, t);
}

/** The forward of a unary op on a float tensor, recording nothing. */
function unaryRaw(op: UnaryOp, x: Tensor, p0?: number, p1?: number): Tensor {
  assertFloating(x, op);
  const src = contiguousData(x);
  const out = emptyTensor(x.dtype, x.shape);
  getBackend().unary(op, src.storage.data, src.offset, out.storage.data, x.numel, p0, p1);
  return out;
}

/** g·f'(saved) through the fused kernel; only used when the backward itself is not recorded. */
function fusedGrad(op: UnaryGradOp, g: Tensor, saved: Tensor, p0?: number, p1?: number): Tensor {
  const gc = contiguousData(g);
  const out = emptyTensor(g.dtype, g.shape);
  getBackend().unaryGrad(op, denseData(gc), saved.storage.data, saved.offset, out.storage.data, g.numel, p0, p1);
  return out;
}

/**
 * Defines a differentiable unary op: the fused gradient kernel when the backward is not being
 * recorded, and a formula of public ops (so double backward works) when it is.
 */
function unary(
  op: UnaryOp,
  name: string,
  saves: "x" | "y" | "none",
  formula: (g: Tensor, x: Tensor, y: Tensor) => Tensor,
  gradOp?: UnaryGradOp,
) {
  return (x: Tensor): Tensor => {
    assertTensor(x, op);
    const y = unaryRaw(op, x);
    const saved = saves === "x" ? contiguousData(x) : y;
    return record(
      y,
      name,
      [x],
      (g) => [gradOp && !isGradEnabled() ? fusedGrad(gradOp, g, saved) : formula(g, x, y.detach())],
      saves === "x" ? [x] : [],
    );
  };
}

export const neg = unary("neg", "NegBackward", "none", (g) => neg(g));
export const exp = unary("exp", "ExpBackward", "y", (g, _x, y) => mul(g, y), "exp");
export const log = unary("log", "LogBackward", "x", (g, x) => div(g, x));
export const sqrt = unary("sqrt", "SqrtBackward", "y", (g, _x, y) => div(g, mul(y, 2)), "sqrt");
export const rsqrt = unary("rsqrt", "RsqrtBackward", "y", (g, _x, y) => mul(g, mul(powScalar(y, 3), -0.5)), "rsqrt");
export const abs = unary("abs", "AbsBackward", "x", (g, x) => mul(g, sign(x)), "abs");
export const tanh = unary("tanh", "TanhBackward", "y", (g, _x, y) => mul(g, sub(1, mul(y, y))), "tanh");
export const sigmoid = unary("sigmoid", "SigmoidBackward", "y", (g, _x, y) => mul(g, mul(y, sub(1, y))), "sigmoid");
export const relu = unary("relu", "ReluBackward", "x", (g, x) => mul(g, to(gt(x, 0), g.dtype)), "relu");
export const silu = unary(
  "silu",
  "SiluBackward",
  "x",
  (g, x) => {
    const s = sigmoid(x);
    return mul(g, mul(s, add(1, mul(x, sub(1, s)))));
  },
  "silu",
);
export const reciprocal = unary("reciprocal", "ReciprocalBackward", "y", (g, _x, y) => neg(mul(g, mul(y, y))), "reciprocal");
export const square = (x: Tensor): Tensor => mul(x, x);

export function sign(x: Tensor): Tensor {
  return unaryRaw("sign", x);
}

const geluExact = unary(
  "gelu",
  "GeluBackward",
  "x",
  (g, x) => {
    // d/dx x·Φ(x) = Φ(x) + x·φ(x)
    const cdf = mul(add(erfViaGelu(x), 1), 0.5);
    const pdf = mul(exp(mul(mul(x, x), -0.5)), 1 / Math.sqrt(2 * Math.PI));
    return mul(g, add(cdf, mul(x, pdf)));
  },
  "gelu",
);
const geluTanh = unary(
  "gelu_tanh",
  "GeluBackward",
  "x",
  (g, x) => {
    const k = Math.sqrt(2 / Math.PI);
    const inner = mul(add(x, mul(powScalar(x, 3), 0.044715)), k);
    const t = tanh(inner);
    const dInner = mul(add(mul(mul(x, x), 3 * 0.044715), 1), k);
    return mul(g, add(mul(add(t, 1), 0.5), mul(mul(mul(x, sub(1, mul(t, t))), dInner), 0.5)));
  },
  "gelu_tanh",
);

/** erf(x/√2) recovered from gelu: gelu(x) = x·(1+erf(x/√2))/2. Used only by the double-backward formula. */
function erfViaGelu(x: Tensor): Tensor {
  const safe = where(eq(x, 0), 1, x);
  return where(eq(x, 0), 0, sub(div(mul(geluExact(safe), 2), safe), 1));
}

export function gelu(x: Tensor, approximate: "none" | "tanh" = "none"): Tensor {
  if (approximate !== "none" && approximate !== "tanh") throw new TypeError(`gelu: approximate must be "none" or "tanh", got ${JSON.stringify(approximate)}`);
  return approximate === "tanh" ? geluTanh(x) : geluExact(x);
}

export function powScalar(x: Tensor, exponent: number): Tensor {
  assertTensor(x, "pow");
  if (x.dtype === "int32" || x.dtype === "bool") return pow(x, scalarTensor(exponent, x.dtype));
  const y = unaryRaw("pow_scalar", x, exponent);
  return record(
    y,
    "PowBackward",
    [x],
    (g) => [isGradEnabled() ? mul(g, mul(powScalar(x, exponent - 1), exponent)) : fusedGrad("pow_scalar", g, contiguousData(x), exponent)],
    [x],
  );
}

export function clamp(x: Tensor, min?: number | null, max?: number | null): Tensor {
  assertTensor(x, "clamp");
  const lo = min ?? Number.NEGATIVE_INFINITY;
  const hi = max ?? Number.POSITIVE_INFINITY;
  // As in PyTorch, min > max is allowed and yields max everywhere (the gradient is then zero).
  const y = unaryRaw("clamp", x, lo, hi);
  return record(
    y,
    "ClampBackward",
    [x],
    (g) => [isGradEnabled() ? mul(g, to(logicalAnd(ge(x, lo), le(x, hi)), g.dtype)) : fusedGrad("clamp", g, contiguousData(x), lo, hi)],
    [x],
  );
}

/** dst += src in place (shapes broadcast into dst's). Used by gradient accumulation. */
export function addInPlace(dst: Tensor, src: Tensor): Tensor {
  return binaryInPlace("add", dst, src, "add_");
}

export function binaryInPlace(op: BinaryOp, dst: Tensor, src: Operand, name: string): Tensor {
  beginInPlace(dst, name);
  const other = typeof src === "number" ? scalarTensor(src, dst.dtype) : to(src, dst.dtype);
  const shape = broadcastShapes(dst.shape, other.shape, name);
  if (shape.length !== dst.shape.length || shape.some((d, i) => d !== dst.shape[i])) {
    throw new RangeError(`${name}: the result of shape ${formatShape(shape)} does not fit the destination of shape ${formatShape(dst.shape)}`);
  }
  const vb = { data: other.storage.data, offset: other.offset, strides: broadcastStrides(other.shape, other.strides, shape) };
  // The destination is contiguous (checked by beginInPlace), and each output element depends only
  // on the input elements at the same index, so writing over `dst` while reading it is safe.
  getBackend().binary(op, viewOf(dst), vb, shape, denseData(dst));
  return dst;
}

/** Fills a contiguous tensor in place. */
export function fillInPlace(dst: Tensor, value: number): Tensor {
  beginInPlace(dst, "fill_");
  getBackend().fill(dst.storage.data, dst.offset, dst.numel, value);
  return dst;
}

/** Copies src (broadcast to dst's shape, any dtype) into a contiguous dst in place. */
export function copyInPlace(dst: Tensor, src: Tensor): Tensor {
  beginInPlace(dst, "copy_");
  const shape = broadcastShapes(dst.shape, src.shape, "copy_");
  if (shape.length !== dst.shape.length || shape.some((d, i) => d !== dst.shape[i])) {
    throw new RangeError(`copy_: cannot copy a tensor of shape ${formatShape(src.shape)} into one of shape ${formatShape(dst.shape)}`);
  }
  getBackend().copy({ data: src.storage.data, offset: src.offset, strides: broadcastStrides(src.shape, src.strides, shape) }, shape, dst.storage.data, dst.offset);
  return dst;
}

export { unaryRaw };
