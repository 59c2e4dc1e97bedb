import type { BinaryOp, UnaryGradOp, UnaryOp } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { needsGradOf, record } from "../autograd/record.js";
import { canCast, isFloating, resultType, type DType } from "../tensor/dtype.js";
import { broadcastShapes, broadcastStrides, formatShape, shapesEqual } from "../tensor/shape.js";
import { allocate } from "../tensor/storage.js";
import { Tensor, denseData } from "../tensor/tensor.js";
import { to, zeros } from "./creation.js";
import { sumToShape } from "./reduction.js";
import { inFloat32 } from "./bfloat16.js";
import { assertFloating, assertTensor, beginInPlace, contiguousData, emptyLike, emptyTensor, viewOf, writeInto } from "./util.js";

export type Operand = Tensor | number;

const COMPARISONS = new Set<BinaryOp>(["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"]);

/** A 0-d tensor holding a scalar operand. */
export function scalarTensor(value: number, dtype: DType): Tensor {
  // bfloat16 memory holds bits, not numbers: round through a float32 copy.
  if (dtype === "bfloat16") return contiguousData(scalarTensor(value, "float32"), "bfloat16");
  const t = new Tensor(allocate(dtype, 1, false), []);
  t.storage.data[0] = value;
  return t;
}

/** Brings both operands to their result dtype (PyTorch's type promotion, see resultType). */
function operands(a: Operand, b: Operand, op: string): [Tensor, Tensor] {
  if (a instanceof Tensor && b instanceof Tensor && a.dtype === b.dtype) return [a, b];
  if (typeof a === "number" && typeof b === "number") throw new TypeError(`${op}: expected at least one Tensor operand, got two numbers`);
  if (typeof a !== "number") assertTensor(a, op);
  if (typeof b !== "number") assertTensor(b, op, "other");
  const dtype = resultType([a, b]);
  const cast = (v: Tensor | number) => (typeof v === "number" ? scalarTensor(v, dtype) : to(v, dtype));
  return [cast(a), cast(b)];
}

/** PyTorch refuses arithmetic that has no meaning on booleans (the message says what to use instead). */
function refuseBool(op: string, ...values: Operand[]): void {
  if (!values.some((v) => typeof v !== "number" && v.dtype === "bool")) return;
  if (op === "sub") throw new TypeError("sub: subtraction with a bool tensor is not supported; use logicalXor-style ops (ne) or logical not (eq(x, false)) instead");
  if (op === "neg") throw new TypeError("neg: negation of a bool tensor is not supported; use eq(x, false) to invert a mask");
  throw new TypeError(`${op}: not supported for bool tensors; convert with .to("int32") or .float() first`);
}

/** On bool, add and maximum are logical or; mul and minimum logical and (the result stays 0/1). */
const BOOL_OPS: Partial<Record<BinaryOp, BinaryOp>> = { add: "logical_or", maximum: "logical_or", mul: "logical_and", minimum: "logical_and" };

const UNIT_STRIDE: readonly number[] = Object.freeze([1]);

/** The forward of a binary op over broadcast shapes, recording nothing. */
function binaryRaw(op: BinaryOp, a: Tensor, b: Tensor, name: string): Tensor {
  if (a.dtype === "bfloat16") {
    // Computed in float32 and rounded once, as PyTorch's CPU kernels (comparisons are exact either way).
    const out = binaryRaw(op, contiguousData(a, "float32"), contiguousData(b, "float32"), name);
    return COMPARISONS.has(op) ? out : contiguousData(out, "bfloat16");
  }
  if (a.dtype === "bool") op = BOOL_OPS[op] ?? op;
  // Same shape, both dense: one flat run, with no broadcast strides to work out.
  if (a.hasDenseStrides() && b.hasDenseStrides() && shapesEqual(a.shape, b.shape)) {
    const out = emptyLike(a, COMPARISONS.has(op) ? "bool" : a.dtype);
    const va = { data: a.storage.data, offset: a.offset, strides: UNIT_STRIDE };
    const vb = { data: b.storage.data, offset: b.offset, strides: UNIT_STRIDE };
    getBackend().binary(op, va, vb, [a.numel], out.storage.data);
    return out;
  }
  const shape = broadcastShapes(a.shape, b.shape, name);
  const out = emptyTensor(COMPARISONS.has(op) ? "bool" : a.dtype, shape);
  const va = { data: a.storage.data, offset: a.offset, strides: broadcastStrides(a.shape, a.strides, shape) };
  const vb = { data: b.storage.data, offset: b.offset, strides: broadcastStrides(b.shape, b.strides, shape) };
  getBackend().binary(op, va, vb, shape, out.storage.data);
  return out;
}

/**
 * A dense float tensor and a number: the op runs as one scalar kernel (x + s, x · s), with no 0-d
 * tensor made for the number. The kernel rounds s to the tensor's dtype first, as the 0-d tensor
 * did, so results are the same bits.
 */
function scalarOperand(x: Operand, s: Operand): x is Tensor {
  return typeof s === "number" && x instanceof Tensor && (x.dtype === "float32" || x.dtype === "float64") && x.hasDenseStrides();
}

function scalarRaw(op: "add_scalar" | "mul_scalar", x: Tensor, s: number): Tensor {
  const out = emptyLike(x);
  getBackend().unary(op, x.storage.data, x.offset, out.storage.data, x.numel, s);
  return out;
}

export function add(a: Operand, b: Operand): Tensor {
  if (scalarOperand(a, b) || scalarOperand(b, a)) {
    const [x, s] = (typeof b === "number" ? [a, b] : [b, a]) as [Tensor, number];
    const out = scalarRaw("add_scalar", x, s);
    return needsGradOf(x) ? record(out, "AddBackward", [x], (g) => [g]) : out;
  }
  const [x, y] = operands(a, b, "add");
  const out = binaryRaw("add", x, y, "add");
  if (!needsGradOf(x, y)) return out;
  return record(out, "AddBackward", [x, y], (g) => [sumToShape(g, x.shape), sumToShape(g, y.shape)]);
}

export function sub(a: Operand, b: Operand): Tensor {
  if (scalarOperand(a, b)) {
    // x − s is x + (−s) exactly (IEEE subtraction is the addition of the negation).
    const out = scalarRaw("add_scalar", a, -(b as number));
    return needsGradOf(a) ? record(out, "SubBackward", [a], (g) => [g]) : out;
  }
  refuseBool("sub", a, b);
  const [x, y] = operands(a, b, "sub");
  const out = binaryRaw("sub", x, y, "sub");
  if (!needsGradOf(x, y)) return out;
  return record(out, "SubBackward", [x, y], (g) => [sumToShape(g, x.shape), y.requiresGrad ? sumToShape(neg(g), y.shape) : null]);
}

export function mul(a: Operand, b: Operand): Tensor {
  if (scalarOperand(a, b) || scalarOperand(b, a)) {
    const [x, s] = (typeof b === "number" ? [a, b] : [b, a]) as [Tensor, number];
    const out = scalarRaw("mul_scalar", x, s);
    return needsGradOf(x) ? record(out, "MulBackward", [x], (g) => [mul(g, s)]) : out;
  }
  const [x, y] = operands(a, b, "mul");
  const out = binaryRaw("mul", x, y, "mul");
  if (!needsGradOf(x, y)) return out;
  return record(
    out,
    "MulBackward",
    [x, y],
    (g) => [x.requiresGrad ? sumToShape(mul(g, y), x.shape) : null, y.requiresGrad ? sumToShape(mul(g, x), y.shape) : null],
    [x, y],
  );
}

export function div(a: Operand, b: Operand): Tensor {
  // number / tensor is PyTorch's __rtruediv__: reciprocal(b)·a (so its gradient goes through 1/b²).
  if (typeof a === "number" && b instanceof Tensor) return mul(reciprocal(b), a);
  let [x, y] = operands(a, b, "div");
  if (x.dtype === "int32" || x.dtype === "bool") [x, y] = [to(x, "float32"), to(y, "float32")];
  const out = binaryRaw("div", x, y, "div");
  return record(
    out,
    "DivBackward",
    [x, y],
    // −g·(a/b)/b rather than −g·a/b², which underflows to 0 or overflows where b² does.
    (g) => [x.requiresGrad ? sumToShape(div(g, y), x.shape) : null, y.requiresGrad ? sumToShape(neg(div(mul(g, div(x, y)), y)), y.shape) : null],
    [x, y],
  );
}

/** a ** b for a tensor exponent; a number exponent takes the cheaper pow_scalar path. */
export function pow(a: Operand, b: Operand): Tensor {
  if (typeof b === "number" && typeof a !== "number") return powScalar(a, b);
  const [x, y] = operands(a, b, "pow");
  if (x.dtype === "bool") throw new TypeError("pow: not supported when both operands are bool; convert with .to(\"int32\") first");
  const out = binaryRaw("pow", x, y, "pow");
  return record(
    out,
    "PowBackward",
    [x, y],
    (g) => {
      // PyTorch: no gradient to the base where the exponent is 0 (0^0 would give 0·0^-1 = NaN).
      const gx = x.requiresGrad ? sumToShape(where(eq(y, 0), 0, mul(g, mul(y, pow(x, sub(y, 1))))), x.shape) : null;
      // d/dy x^y = x^y·ln x; PyTorch defines it as 0 where x == 0 and y >= 0 instead of NaN.
      const xy = isGradEnabled() ? pow(x, y) : out.detach();
      const gy = y.requiresGrad ? sumToShape(mul(g, where(logicalAnd(eq(x, 0), ge(y, 0)), 0, mul(xy, log(x)))), y.shape) : null;
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
  assertTensor(a, op);
  assertTensor(b, op, "other");
  const [x, y] = operands(a, b, op);
  const out = binaryRaw(op, x, y, op);
  return record(
    out,
    op === "maximum" ? "MaximumBackward" : "MinimumBackward",
    [x, y],
    (g) => {
      // As PyTorch: ties split the gradient evenly; a side gets nothing only where it strictly
      // loses, so where a NaN makes the result NaN both sides get the whole gradient.
      const [xLoses, yLoses] = op === "maximum" ? [lt(x, y), gt(x, y)] : [gt(x, y), lt(x, y)];
      const tie = eq(x, y);
      const share = (loses: Tensor) => to(where(tie, 0.5, where(loses, 0, 1)), g.dtype);
      return [
        x.requiresGrad ? sumToShape(mul(g, share(xLoses)), x.shape) : null,
        y.requiresGrad ? sumToShape(mul(g, share(yLoses)), y.shape) : null,
      ];
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

/** cond ? a : b elementwise with broadcasting (torch.where); both may be numbers. */
export function where(cond: Tensor, a: Operand, b: Operand): Tensor {
  assertTensor(cond, "where", "condition");
  const c = cond.dtype === "bool" ? cond : ne(cond, 0);
  const dtype = resultType([a, b]);
  const cast = (v: Operand) => (typeof v === "number" ? scalarTensor(v, dtype) : to(v, dtype));
  const [x, y] = [cast(a), cast(b)];
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

/** A scalar as a value of `dtype`, refusing what the dtype cannot hold (as PyTorch's fill and masked_fill). */
function scalarFor(value: number, dtype: DType, op: string): number {
  if (dtype === "bool") return value !== 0 ? 1 : 0;
  if (dtype === "int32") {
    if (!Number.isFinite(value) || value >= 2 ** 31 || value < -(2 ** 31)) throw new RangeError(`${op}: the value ${value} cannot be converted to int32 without overflow`);
    return Math.trunc(value);
  }
  return value;
}

/** t with `value` where mask is true; the result keeps t's dtype (the value is converted, as PyTorch). */
export function maskedFill(t: Tensor, mask: Tensor, value: number): Tensor {
  assertTensor(t, "maskedFill");
  assertTensor(mask, "maskedFill", "mask");
  if (mask.dtype !== "bool") throw new TypeError(`maskedFill: expected a bool mask, got ${mask.dtype} ${formatShape(mask.shape)}`);
  broadcastShapes(t.shape, mask.shape, "maskedFill");
  return where(mask, scalarTensor(scalarFor(value, t.dtype, "maskedFill"), t.dtype), t);
}

/** The forward of a unary op on a float tensor, recording nothing. */
function unaryRaw(op: UnaryOp, x: Tensor, p0?: number, p1?: number): Tensor {
  assertFloating(x, op);
  const src = contiguousData(x);
  const out = emptyLike(src);
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
 * What a unary op does with integer (int32) and bool inputs, as PyTorch: compute in float32
 * ("float": exp, log, …), keep the dtype ("keep": neg, abs, sign, relu), or refuse ("refuse").
 */
type IntMode = "float" | "keep" | "refuse";

/** An integer-valued op on an int32/bool tensor, computed exactly in float64 and cast back. */
function integerUnary(op: UnaryOp, x: Tensor, dtype: DType, p0?: number, p1?: number): Tensor {
  return contiguousData(unaryRaw(op, contiguousData(x, "float64"), p0, p1), dtype);
}

function nonFloat(op: UnaryOp, x: Tensor, ints: IntMode, bools: IntMode, float: (x: Tensor) => Tensor): Tensor {
  const mode = x.dtype === "bool" ? bools : ints;
  if (mode === "float") return float(to(x, "float32"));
  if (mode === "keep") return x.dtype === "bool" ? x.detach() : integerUnary(op, x, x.dtype);
  throw new TypeError(`${op}: not supported for ${x.dtype} tensors (shape ${formatShape(x.shape)}); convert with .float() first`);
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
  ints: [IntMode, IntMode] = ["float", "float"],
) {
  const fn = (x: Tensor): Tensor => {
    assertTensor(x, op);
    if (x.dtype === "int32" || x.dtype === "bool") return nonFloat(op, x, ints[0], ints[1], fn);
    if (x.dtype === "bfloat16") return inFloat32(fn, [x]);
    const y = unaryRaw(op, x);
    if (!needsGradOf(x)) return y;
    const saved = saves === "x" ? contiguousData(x) : y;
    return record(
      y,
      name,
      [x],
      // With the backward recorded (double backward), y is recomputed from x so that the gradient
      // stays a function of x; the saved y has no graph.
      (g) => [gradOp && !isGradEnabled() ? fusedGrad(gradOp, g, saved) : formula(g, x, isGradEnabled() && saves === "y" ? fn(x) : y.detach())],
      saves === "x" ? [x] : [],
    );
  };
  return fn;
}

const KEEP: [IntMode, IntMode] = ["keep", "refuse"];
const REFUSE: [IntMode, IntMode] = ["refuse", "refuse"];

export const neg = unary("neg", "NegBackward", "none", (g) => neg(g), undefined, KEEP);
export const exp = unary("exp", "ExpBackward", "y", (g, _x, y) => mul(g, y), "exp");
export const log = unary("log", "LogBackward", "x", (g, x) => div(g, x));
export const sqrt = unary("sqrt", "SqrtBackward", "y", (g, _x, y) => div(g, mul(y, 2)), "sqrt");
export const rsqrt = unary("rsqrt", "RsqrtBackward", "y", (g, _x, y) => mul(g, mul(powScalar(y, 3), -0.5)), "rsqrt");
export const abs = unary("abs", "AbsBackward", "x", (g, x) => mul(g, sign(x)), "abs", KEEP);
export const tanh = unary("tanh", "TanhBackward", "y", (g, _x, y) => mul(g, sub(1, mul(y, y))), "tanh");
export const sigmoid = unary("sigmoid", "SigmoidBackward", "y", (g, _x, y) => mul(g, mul(y, sub(1, y))), "sigmoid");
export const relu = unary("relu", "ReluBackward", "x", (g, x) => mul(g, to(gt(x, 0), g.dtype)), "relu", KEEP);
export const silu = unary(
  "silu",
  "SiluBackward",
  "x",
  (g, x) => {
    const s = sigmoid(x);
    return mul(g, mul(s, add(1, mul(x, sub(1, s)))));
  },
  "silu",
  REFUSE,
);
// −g·(y·y) as PyTorch orders it (y² underflowing to 0 gives NaN against an infinite g, not ±inf);
// the fused kernel multiplies g·y first, so it is not used.
export const reciprocal = unary("reciprocal", "ReciprocalBackward", "y", (g, _x, y) => neg(mul(g, mul(y, y))));
/** x·x; a bool square is an int32 0/1 as PyTorch (which gives int64). */
export const square = (x: Tensor): Tensor => {
  assertTensor(x, "square");
  const v = x.dtype === "bool" ? to(x, "int32") : x;
  return mul(v, v);
};

/** −1, 0 or 1 (0 for NaN, as PyTorch); its gradient is zero everywhere, but it is part of the graph. */
export function sign(x: Tensor): Tensor {
  assertTensor(x, "sign");
  if (x.dtype === "int32" || x.dtype === "bool") return nonFloat("sign", x, "keep", "keep", sign);
  if (x.dtype === "bfloat16") return inFloat32(sign, [x]);
  const y = unaryRaw("sign", x);
  return record(y, "SignBackward", [x], (g) => [zeros(g.shape, { dtype: g.dtype })]);
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
  REFUSE,
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
  REFUSE,
);

/**
 * erf(x/√2) recovered from gelu: gelu(x) = x·(1+erf(x/√2))/2. Used only by the double-backward
 * formula. Near 0 the quotient loses its slope to cancellation (x² underflows), so there the series
 * √(2/π)·(x − x³/6) stands in (its error below 1e-3 is under 1e-16).
 */
function erfViaGelu(x: Tensor): Tensor {
  const small = lt(abs(x), 1e-3);
  const safe = where(small, 1, x);
  const series = mul(mul(x, Math.sqrt(2 / Math.PI)), sub(1, mul(mul(x, x), 1 / 6)));
  return where(small, series, sub(div(mul(geluExact(safe), 2), safe), 1));
}

export function gelu(x: Tensor, approximate: "none" | "tanh" = "none"): Tensor {
  if (approximate !== "none" && approximate !== "tanh") throw new TypeError(`gelu: approximate must be "none" or "tanh", got ${JSON.stringify(approximate)}`);
  return approximate === "tanh" ? geluTanh(x) : geluExact(x);
}

export function powScalar(x: Tensor, exponent: number): Tensor {
  assertTensor(x, "pow");
  if (x.dtype === "int32" || x.dtype === "bool") {
    if (!Number.isInteger(exponent)) return powScalar(to(x, "float32"), exponent);
    if (exponent < 0) throw new RangeError(`pow: integers to negative integer powers are not allowed (${x.describe()} ** ${exponent}); use a float tensor`);
    return integerUnary("pow_scalar", x, "int32", exponent);
  }
  if (x.dtype === "bfloat16") return inFloat32(powScalar, [x, exponent]);
  // PyTorch computes x ** ±0.5 as sqrt/rsqrt, so (-inf) ** 0.5 is NaN there, not std::pow's inf.
  const y = exponent === 0.5 ? unaryRaw("sqrt", x) : exponent === -0.5 ? unaryRaw("rsqrt", x) : unaryRaw("pow_scalar", x, exponent);
  return record(
    y,
    "PowBackward",
    [x],
    (g) => {
      // PyTorch: x ** 0 has a zero gradient everywhere, even at x = 0.
      if (exponent === 0) return [zeros(g.shape, { dtype: g.dtype })];
      // x ** (p − 1) at p − 1 = ±0.5 must also go through sqrt/rsqrt (the fused kernel uses std::pow).
      const formula = isGradEnabled() || exponent === 1.5 || exponent === 0.5;
      return [formula ? mul(g, mul(powScalar(x, exponent - 1), exponent)) : fusedGrad("pow_scalar", g, contiguousData(x), exponent)];
    },
    [x],
  );
}

/**
 * torch.clamp: at least one bound; the result dtype follows type promotion (an int32 tensor with a
 * fractional bound gives float32), and a NaN bound gives NaN everywhere, as PyTorch.
 */
export function clamp(x: Tensor, min?: number | null, max?: number | null): Tensor {
  assertTensor(x, "clamp");
  const bounds = [min, max].filter((b): b is number => b !== null && b !== undefined);
  if (bounds.length === 0) throw new TypeError("clamp: at least one of min and max must be given (not null or undefined)");
  const dtype = resultType([x, ...bounds]);
  const lo = min ?? Number.NEGATIVE_INFINITY;
  const hi = max ?? Number.POSITIVE_INFINITY;
  if (dtype === "int32") return integerUnary("clamp", x, "int32", lo, hi);
  if (dtype === "bfloat16") return inFloat32(clamp, [x, min, max]);
  const xf = to(x, dtype);
  // As in PyTorch, min > max is allowed and yields max everywhere (the gradient is then zero).
  const y = Number.isNaN(lo) || Number.isNaN(hi) ? unaryRaw("add_scalar", xf, NaN) : unaryRaw("clamp", xf, lo, hi);
  return record(
    y,
    "ClampBackward",
    [xf],
    (g) => [isGradEnabled() ? mul(g, to(logicalAnd(ge(xf, lo), le(xf, hi)), g.dtype)) : fusedGrad("clamp", g, contiguousData(xf), lo, hi)],
    [xf],
  );
}

/** dst += src in place (shapes broadcast into dst's). Used by gradient accumulation. */
export function addInPlace(dst: Tensor, src: Tensor): Tensor {
  return binaryInPlace("add", dst, src, "add_");
}

export function binaryInPlace(op: BinaryOp, dst: Tensor, src: Operand, name: string): Tensor {
  assertTensor(dst, name);
  const dtype = resultType([dst, src]);
  if (op === "sub") refuseBool(name, dst, src);
  if (op === "div" && !isFloating(dtype)) {
    if (!canCast("float32", dst.dtype)) throw new TypeError(`${name}: the result of a division is float32, which cannot be written into a ${dst.dtype} tensor`);
  } else if (!canCast(dtype, dst.dtype)) {
    throw new TypeError(`${name}: the result type ${dtype} cannot be written into a ${dst.dtype} tensor (${formatShape(dst.shape)}) in place`);
  }
  beginInPlace(dst, name);
  const other = typeof src === "number" ? scalarTensor(src, dst.dtype) : src;
  const shape = broadcastShapes(dst.shape, other.shape, name);
  if (shape.length !== dst.shape.length || shape.some((d, i) => d !== dst.shape[i])) {
    throw new RangeError(`${name}: the result of shape ${formatShape(shape)} does not fit the destination of shape ${formatShape(dst.shape)}`);
  }
  if (dst.isContiguous() && dtype === dst.dtype && (typeof src === "number" || src.dtype === dst.dtype) && dst.dtype !== "bool" && dst.dtype !== "bfloat16") {
    // Each output element depends only on the input elements at the same index, so writing over a
    // dense `dst` while reading it is safe.
    const vb = { data: other.storage.data, offset: other.offset, strides: broadcastStrides(other.shape, other.strides, shape) };
    getBackend().binary(op, viewOf(dst), vb, shape, denseData(dst));
    return dst;
  }
  const a = to(dst.detach(), dtype);
  const b = typeof src === "number" ? scalarTensor(src, dtype) : to(src.detach(), dtype);
  const result = op === "div" && !isFloating(dtype) ? binaryRaw("div", to(a, "float32"), to(b, "float32"), name) : binaryRaw(op, a, b, name);
  writeInto(dst, result);
  return dst;
}

/** Fills a tensor (or view) in place; the value is converted to its dtype, refusing overflow. */
export function fillInPlace(dst: Tensor, value: number): Tensor {
  assertTensor(dst, "fill_");
  const v = scalarFor(value, dst.dtype, "fill_");
  // PyTorch fills expanded views too (every alias gets the same value, so nothing is ambiguous).
  beginInPlace(dst, "fill_", false);
  if (dst.isContiguous()) getBackend().fill(dst.storage.data, dst.offset, dst.numel, v);
  else writeInto(dst, scalarTensor(v, dst.dtype));
  return dst;
}

/** Copies src (broadcast to dst's shape, any dtype) into dst, which may be a view, in place. */
export function copyInPlace(dst: Tensor, src: Tensor): Tensor {
  assertTensor(dst, "copy_");
  assertTensor(src, "copy_", "src");
  beginInPlace(dst, "copy_");
  const shape = broadcastShapes(dst.shape, src.shape, "copy_");
  if (shape.length !== dst.shape.length || shape.some((d, i) => d !== dst.shape[i])) {
    throw new RangeError(`copy_: cannot copy a tensor of shape ${formatShape(src.shape)} into one of shape ${formatShape(dst.shape)}`);
  }
  // A source sharing dst's memory is read completely before anything is written.
  writeInto(dst, src.storage === dst.storage ? contiguousData(src) : src);
  return dst;
}

export { unaryRaw };
