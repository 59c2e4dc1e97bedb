/**
 * Replays one differential-fuzz case (written by tools/fuzz/gen_cases.py) against ringtorch and
 * says how it differs from PyTorch: error vs no error, output count, dtype, shape, requiresGrad,
 * values (tolerance by dtype; NaN matches NaN, infinities their sign), gradients, and for in-place
 * ops the inputs' memory after the op.
 */
import * as rt from "../../src/index.js";
import { Tensor } from "../../src/index.js";
import { OPS } from "./ops.js";

type Num = number | string | boolean;
interface TensorSpec {
  dtype: rt.DType;
  shape: number[];
  values: Num[];
  view: (string | number | number[])[][];
  grad: boolean;
}
interface Encoded {
  dtype: rt.DType;
  shape: number[];
  values: Num[];
  rg?: boolean;
}
export interface FuzzCase {
  op: string;
  seed: number;
  args: unknown[];
  kw: Record<string, unknown>;
  error?: string;
  outs?: Encoded[];
  gout?: Num[];
  grads?: (Encoded | null)[];
  gradError?: string;
  after?: Encoded[];
  /** Double backward: the weights w_i of s = Σ Σ(grad_i·w_i), and ds/dleaf (null: s has no graph). */
  ggw?: number[][];
  gg?: (Encoded | null)[] | null;
}

/** A difference: `kind` names the class (with the op), `detail` says what differed. */
export interface Difference {
  kind: string;
  detail: string;
}

function num(v: Num): number {
  if (v === "nan") return NaN;
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  return typeof v === "boolean" ? Number(v) : Number(v);
}

interface Decoded {
  value: unknown;
  bases: Tensor[];
}

function decode(arg: unknown): Decoded {
  if (arg && typeof arg === "object" && !Array.isArray(arg) && "T" in arg) {
    const s = (arg as { T: TensorSpec }).T;
    const base = rt.tensor(Float64Array.from(s.values.map(num)), { dtype: s.dtype, shape: s.shape });
    if (s.grad) base.requiresGrad = true;
    let t = base;
    for (const step of s.view) {
      if (step[0] === "transpose") t = rt.transpose(t, step[1] as number, step[2] as number);
      else if (step[0] === "slice") t = rt.slice(t, step[1] as number, step[2] as number, step[3] as number, step[4] as number);
      else if (step[0] === "expand") t = rt.expand(t, step[1] as number[]);
    }
    return { value: t, bases: [base] };
  }
  if (Array.isArray(arg) && arg.length > 0 && arg.every((a) => a && typeof a === "object" && "T" in a)) {
    const parts = arg.map(decode);
    return { value: parts.map((p) => p.value), bases: parts.flatMap((p) => p.bases) };
  }
  if (arg === "nan" || arg === "inf" || arg === "-inf") return { value: num(arg), bases: [] };
  return { value: arg, bases: [] };
}

const TOL: Record<string, [number, number]> = { float32: [1e-4, 1e-5], float64: [1e-7, 1e-9], bfloat16: [1e-2, 1e-2] };

/**
 * Documented differences (README, "Differences from PyTorch"): an output value ringtorch gives on
 * purpose where PyTorch gives another. gelu(+inf) is +inf (PyTorch's vectorised erf gives NaN).
 */
const ACCEPTED: Record<string, (actual: number, expected: number) => boolean> = {
  gelu: (a, e) => Number.isNaN(e) && a === Infinity,
  // An infinite weight times x̂ of a group of equal values: PyTorch's x̂ is exactly 0 (NaN), ringtorch's
  // mean may be an ulp off the values (±inf).
  layerNorm: (a, e) => Number.isNaN(e) && (a === Infinity || a === -Infinity),
  groupNorm: (a, e) => Number.isNaN(e) && (a === Infinity || a === -Infinity),
};

/**
 * The same for gradients: next to an infinite input, layerNorm's backward gives ±inf where PyTorch's
 * gives NaN; cumprod's gives the exact product of the other factors where PyTorch's divides the
 * output by an infinite (or NaN) input and gets NaN (and where a product is inf·0, either side may
 * give NaN where the other gives ±inf).
 */
const GRAD_ACCEPTED: Record<string, (actual: number, expected: number) => boolean> = {
  layerNorm: (a, e) => Number.isNaN(e) && (a === Infinity || a === -Infinity),
  cumprod: (a, e) => (Number.isNaN(e) && !Number.isNaN(a)) || (Number.isNaN(a) && !Number.isFinite(e)),
  // The target's gradient with posWeight at a logit of ±inf: ringtorch's −x − (pw−1)·log σ(x) is inf − inf.
  binaryCrossEntropyWithLogits: (a, e) => Number.isNaN(a) && (e === Infinity || e === -Infinity),
};

/**
 * var/std of huge values: PyTorch's rounding error is relative to the input's scale (a std of
 * 32768 for equal values of 1e30), so the absolute tolerance grows with the largest input.
 */
function momentTolerance(c: FuzzCase, grad = false): (a: number, e: number) => boolean {
  let scale = 0;
  for (const s of specsOf(c)) for (const v of s.values) if (typeof v === "number" && Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
  let atol = (c.op === "var" && !grad ? scale * scale : scale) * 1e-12;
  if (grad) {
    // var's gradient is 2·g·(x − mean)/(N − correction): for near-equal values x − mean is the
    // mean's rounding (an ulp of the largest input in PyTorch's float32 cascade sum, 0 in ringtorch's
    // float64 mean), so both answers are that noise times 2·g.
    const dtype = (c.args[0] as { T: TensorSpec }).T.dtype;
    const eps = { float32: 2 ** -23, bfloat16: 2 ** -8 }[dtype as string] ?? 2 ** -52;
    const g = Math.max(0, ...(c.gout ?? []).map((v) => Math.abs(num(v))).filter(Number.isFinite));
    atol = Math.max(atol, 16 * eps * scale * g);
  }
  return (a, e) => Number.isFinite(a) && Number.isFinite(e) && Math.abs(a - e) <= atol;
}

/**
 * layerNorm's gradient (PyTorch's a·g·w + b·x + c) cancels terms of size ε·Σ|g·w|·rstd·(|x|·rstd)²:
 * its condition number grows as max|x|²/(var + eps). Where a group's variance is near 0 (equal
 * values, one-element groups) both PyTorch's result and ringtorch's are rounding noise of that size
 * (PyTorch gives 2^-13 for a one-element group whose exact gradient is 0), so the absolute tolerance
 * is 8 ulps of it; for well-conditioned inputs it is tighter than the default.
 */
function layerNormTolerance(c: FuzzCase): (a: number, e: number) => boolean {
  const { x, rstd, w, eps } = normConditioning(c);
  const g = (c.gout ?? []).map((v) => Math.abs(num(v))).filter(Number.isFinite).reduce((a, b) => a + b, 0);
  const atol = 8 * eps * rstd * g * w * (1 + (largest(x) * rstd) ** 2);
  return (a, e) => Number.isFinite(a) && Number.isFinite(e) && Math.abs(a - e) <= atol;
}

/**
 * The forward of group and batch norm: PyTorch's fused x·(rstd·w) − mean·(rstd·w) rounds terms of
 * size |x|·rstd·|w|, which for a group of near-equal values (rstd up to 1/√eps) is far above the
 * default absolute tolerance: 8 ulps of that term.
 */
function normForwardTolerance(c: FuzzCase): (a: number, e: number) => boolean {
  const { x, rstd, w, eps } = normConditioning(c);
  const atol = 8 * eps * rstd * w * largest(x);
  return (a, e) => Number.isFinite(a) && Number.isFinite(e) && Math.abs(a - e) <= atol;
}

const NORMS = new Set(["layerNorm", "groupNorm", "batchNorm"]);

const largest = (t: Tensor) => (t.numel === 0 ? 0 : Number(rt.amax(rt.nanToNum(rt.abs(t.detach()), 0, 0, 0)).item()));

/** A norm case's input (float64, grouped so that `dims` are one group), its largest 1/std, |weight| and the dtype's ε. */
function normConditioning(c: FuzzCase): { x: Tensor; rstd: number; w: number; eps: number } {
  let x = rt.to((decode(c.args[0]).value as Tensor).detach(), "float64");
  let dims: number[];
  let weight: unknown;
  let rstd: number | null = null;
  if (c.op === "layerNorm") {
    const k = (c.args[1] as number[]).length;
    dims = Array.from({ length: k }, (_, i) => x.ndim - k + i);
    weight = c.args[2];
  } else if (c.op === "groupNorm") {
    x = rt.reshape(x, [x.shape[0], c.args[1] as number, -1]);
    dims = [2];
    weight = c.args[2];
  } else {
    dims = Array.from({ length: x.ndim }, (_, i) => i).filter((d) => d !== 1);
    weight = c.kw.weight;
    if (!c.kw.training && c.args[2]) rstd = largest(rt.rsqrt(rt.add(rt.to((decode(c.args[2]).value as Tensor).detach(), "float64"), (c.kw.eps as number) ?? 1e-5)));
  }
  rstd ??= largest(rt.rsqrt(rt.add(rt.variance(x, dims, { correction: 0 }), 1e-5)));
  const w = weight ? Math.max(1, largest(rt.to((decode(weight).value as Tensor).detach(), "float64"))) : 1;
  const eps = { float32: 2 ** -23, bfloat16: 2 ** -8 }[(c.args[0] as { T: TensorSpec }).T.dtype as string] ?? 2 ** -52;
  return { x, rstd, w, eps };
}

/**
 * Second order: at a zero norm the 2-norm's double backward is 0 where PyTorch's gives NaN (its div
 * backward computes 0·0/0 under the mask); next to ±inf/NaN inputs cumprod's double backward puts
 * NaN elsewhere than PyTorch's (the same products, multiplied in another order).
 */
const DOUBLE_ACCEPTED: Record<string, (actual: number, expected: number) => boolean> = {
  norm: (a, e) => Number.isNaN(e) && a === 0,
  vectorNorm: (a, e) => Number.isNaN(e) && a === 0,
  cumprod: (a, e) => Number.isNaN(e) || Number.isNaN(a),
};

/** GRAD_ACCEPTED's (or, second order, DOUBLE_ACCEPTED's) rule for a case; cumprod's only where an input is ±inf or NaN. */
function gradAccepted(c: FuzzCase, second = false): ((a: number, e: number) => boolean) | undefined {
  // With an input like 1e-30 (or 1e30), cumprod's second order subtracts terms of 1e30: both answers are rounding noise.
  // scatterReduce's "prod" divides by x the same way (g·result/x).
  const divides = c.op === "cumprod" || (c.op === "scatterReduce" && c.args[4] === "prod");
  // div's second order has a/b³: with a divisor like 1e-30 it overflows, and inf − inf is NaN on one
  // side where the other keeps ±inf.
  if (second && c.op === "div" && specsOf(c).some((s) => s.values.some((v) => typeof v === "number" && v !== 0 && Math.abs(v) < 1e-20))) {
    return (a, e) => (Number.isNaN(e) && !Number.isFinite(a)) || (Number.isNaN(a) && !Number.isFinite(e));
  }
  if (second && divides && specsOf(c).some((s) => s.values.some((v) => typeof v === "number" && v !== 0 && (Math.abs(v) < 1e-20 || Math.abs(v) > 1e20)))) return () => true;
  if (c.op === "cumprod" && !specsOf(c).some((s) => s.values.some((v) => typeof v === "string"))) return undefined;
  // group norm's gradient through an infinite weight: ringtorch's layer-norm backward of g·w sums
  // ±inf terms (NaN) where PyTorch's fused formula may keep one infinity, and the other way round.
  if (c.op === "groupNorm" && c.args[2] && (c.args[2] as { T: TensorSpec }).T.values.some((v) => typeof v === "string")) {
    return (a, e) => (Number.isNaN(a) && !Number.isFinite(e)) || (Number.isNaN(e) && !Number.isFinite(a));
  }
  return (second ? DOUBLE_ACCEPTED : GRAD_ACCEPTED)[c.op];
}

/** Where two value lists differ beyond the dtype's tolerance, or null. */
function compareValues(actual: ArrayLike<number>, expected: Num[], dtype: string, loose = 1, accept?: (a: number, e: number) => boolean): string | null {
  if (actual.length !== expected.length) return `${actual.length} values, expected ${expected.length}`;
  const [rtol, atol] = TOL[dtype] ?? [0, 0];
  for (let i = 0; i < expected.length; i++) {
    const e = num(expected[i]);
    const a = Number(actual[i]);
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;
    if (Number.isFinite(e) && Number.isFinite(a) && Math.abs(a - e) <= loose * (atol + rtol * Math.abs(e))) continue;
    if (accept?.(a, e)) continue;
    return `at flat ${i}: got ${a}, expected ${e}`;
  }
  return null;
}

function flatValues(t: Tensor): ArrayLike<number> {
  const c = rt.contiguous(t.detach());
  return (c.dtype === "bool" ? rt.to(c, "int32") : c.dtype === "bfloat16" ? rt.to(c, "float32") : c).data();
}

function compareTensor(t: unknown, e: Encoded, what: string, loose = 1, accept?: (a: number, e: number) => boolean, tolDtype = e.dtype): Difference | null {
  if (!(t instanceof Tensor)) return { kind: `${what} not a tensor`, detail: `got ${typeof t}` };
  if (t.dtype !== e.dtype) return { kind: `${what} dtype`, detail: `got ${t.dtype}, expected ${e.dtype}` };
  if (t.shape.join(",") !== e.shape.join(",")) return { kind: `${what} shape`, detail: `got [${t.shape}], expected [${e.shape}]` };
  const bad = compareValues(flatValues(t), e.values, tolDtype, loose, accept);
  if (bad) return { kind: `${what} values`, detail: bad };
  return null;
}

function message(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}: ${e.message.slice(0, 160)}` : String(e);
}

/** The tensor specs among a case's arguments. */
function specsOf(c: FuzzCase): TensorSpec[] {
  const out: TensorSpec[] = [];
  const visit = (a: unknown) => {
    if (Array.isArray(a)) a.forEach(visit);
    else if (a && typeof a === "object" && "T" in a) out.push((a as { T: TensorSpec }).T);
  };
  [...c.args, ...Object.values(c.kw)].forEach(visit);
  return out;
}

/**
 * Whole cases where ringtorch differs from PyTorch on purpose (README, "Differences from PyTorch"),
 * with the reason, or null. They are counted apart, never silently passed.
 */
export function documentedDifference(c: FuzzCase): string | null {
  // PyTorch's float32 layer norm squares in float32 and overflows to NaN or 0 above ~1e19;
  // ringtorch accumulates in float64 and returns the finite normalised values.
  // bfloat16 computes in float32 on both sides, so the same holds for it.
  if (NORMS.has(c.op) && specsOf(c).some((s) => (s.dtype === "float32" || s.dtype === "bfloat16") && s.values.some((v) => typeof v === "number" && Math.abs(v) > 1e18))) {
    return "float32/bfloat16 layer/group/batch norm of values above 1e18 (PyTorch overflows)";
  }
  // PyTorch's group norm backward with a bias but no weight raises ("tensor does not have a device").
  if (c.op === "groupNorm" && c.gradError !== undefined && /does not have a device/.test(c.gradError)) {
    return "groupNorm's backward with a bias and no weight: PyTorch's raises";
  }
  // Convolution by im2col multiplies zero padding (and positions a stride skips, in the backward)
  // by the weight: 0·±inf is NaN there, where PyTorch's direct kernels skip them.
  const beyond = (v: unknown, none: number) => v !== undefined && v !== none && v !== "valid" && !(Array.isArray(v) && v.every((s) => s === none));
  if ((c.op === "conv1d" || c.op === "conv2d") && (beyond(c.kw.padding, 0) || beyond(c.kw.stride, 1) || beyond(c.kw.dilation, 1)) && (c.args[1] as { T: TensorSpec }).T.values.some((v) => typeof v === "string")) {
    return "convolution with a non-finite weight next to padding or stride gaps (0·inf)";
  }
  // PyTorch's bfloat16 convolution (oneDNN) turns outputs whose window holds no ±inf into NaN
  // next to one that does; ringtorch computes each window in float32 and rounds once.
  if ((c.op === "conv1d" || c.op === "conv2d") && specsOf(c).some((s) => s.dtype === "bfloat16" && s.values.some((v) => typeof v === "string"))) {
    return "bfloat16 convolution with a non-finite input (PyTorch's oneDNN kernel spreads NaN)";
  }
  // An infinite batch-norm weight: PyTorch's result is ±inf or NaN depending on its kernel path
  // (x·(w·rstd) + (b − mean·w·rstd) for contiguous inputs, (x − mean)·rstd·w for others).
  // PyTorch's batch norm backward reads a strided weight as if it were contiguous: the wrong
  // channel's weight for a slice, and past its storage for an expanded one (a gradient of -2.7e-41
  // where g·w·rstd is -0.157, or 5e8 for a zero weight).
  if (c.op === "batchNorm" && c.gout !== undefined && c.kw.weight && (c.kw.weight as { T: TensorSpec }).T.view.length > 0) {
    return "batchNorm's backward with a non-contiguous weight (PyTorch ignores its strides)";
  }
  // Batch and group norm's second order in bfloat16: PyTorch rounds each step of its formula to
  // bfloat16, and over near-equal values (rstd up to 1/√eps) the cancelling terms leave bfloat16 noise.
  if ((c.op === "batchNorm" || c.op === "groupNorm") && c.ggw !== undefined && specsOf(c).some((s) => s.dtype === "bfloat16")) {
    return "batch/group norm's second order in bfloat16 (PyTorch's formula rounds each step)";
  }
  if (c.op === "batchNorm" && c.kw.weight !== undefined && c.kw.weight !== null && (c.kw.weight as { T: TensorSpec }).T.values.some((v) => typeof v === "string")) {
    return "batchNorm with an infinite or NaN weight (PyTorch's NaN/inf depends on the memory layout)";
  }
  // PyTorch's pow backward computes exponent − 1 and raises for a bool exponent tensor; ringtorch
  // promotes the exponent first and gives the gradient.
  if (c.op === "pow" && c.gradError !== undefined && specsOf(c).some((s) => s.dtype === "bool")) {
    return "pow with a bool exponent tensor: PyTorch's backward raises";
  }
  // ringtorch contracts einsum with its float-only batched matmul; PyTorch's bmm also takes ints and bools.
  if (c.op === "einsum" && c.error === undefined && specsOf(c).some((s) => s.dtype === "int32" || s.dtype === "bool")) {
    return "einsum of int32/bool tensors (ringtorch's matmul is float-only)";
  }
  // PyTorch's atan2 backward negates a bool first argument and raises; ringtorch computes in float.
  if (c.op === "atan2" && c.gradError !== undefined && specsOf(c).some((s) => s.dtype === "bool")) {
    return "atan2 with a bool tensor: PyTorch's backward raises";
  }
  // PyTorch's binary_cross_entropy double backward computes (x² − 2xy + y)/(x²(1−x)²) in the input's
  // dtype: in bfloat16 the numerator cancels to 0; ringtorch's second order is computed in float32.
  if (c.op === "binaryCrossEntropy" && c.ggw !== undefined && specsOf(c).some((s) => s.dtype === "bfloat16")) {
    return "binaryCrossEntropy's second order in bfloat16 (PyTorch's formula cancels in bfloat16)";
  }
  // The same holds for the 2-norm's second order along an expanded (equal-valued) vector, exactly 0:
  // PyTorch's bfloat16 formula leaves about a bfloat16 ulp of the first-order terms (e.g. -0.19),
  // ringtorch's float32 one about 1e-6.
  if (c.op === "vectorNorm" && c.ggw !== undefined && specsOf(c).some((s) => s.dtype === "bfloat16")) {
    return "vectorNorm's second order in bfloat16 (PyTorch's formula cancels in bfloat16)";
  }
  // Reducing every dimension, PyTorch's std takes two passes around a mean rounded to the input's
  // dtype: for equal values (an expanded element) both results are that rounding's noise (0 or about
  // ε·|x|), and std's gradient there is noise divided by noise (PyTorch masks only an exact 0).
  if (c.op === "std" && equalValuesOverAll(c)) return "std of equal values over every dimension (rounding noise)";
  return null;
}

/** The first argument is an expanded single value (more than one element) and the reduction covers every dimension longer than 1. */
function equalValuesOverAll(c: FuzzCase): boolean {
  const x = (c.args[0] as { T: TensorSpec }).T;
  if (!x.view.some((s) => s[0] === "expand") || x.values.length !== 1 || typeof x.values[0] !== "number") return false;
  const shape = x.view.find((s) => s[0] === "expand")![1] as number[];
  const dim = c.args[1] as number | number[] | null;
  const dims = dim === null || dim === undefined || (Array.isArray(dim) && dim.length === 0) ? shape.map((_, i) => i) : (Array.isArray(dim) ? dim : [dim]).map((d) => (d < 0 ? d + shape.length : d));
  return shape.reduce((n, s) => n * s, 1) > 1 && shape.every((s, i) => s === 1 || dims.includes(i));
}

/**
 * PyTorch runs no kernel for an empty tensor, so it accepts dtypes that it refuses otherwise
 * (logSoftmax or linear of an empty bool tensor); ringtorch checks the dtype whatever the size.
 */
function emptyDTypeCheck(c: FuzzCase, e: unknown): boolean {
  // (A bool linear of an empty input returns a strided bias as it is, and refuses a contiguous one.)
  const emptyLinear = c.op === "linear" && specsOf(c)[0].values.length === 0;
  // A product over an empty contraction (K = 0) is zeros in PyTorch without a dtype check either.
  const emptyProduct = ["matmul", "mm", "bmm"].includes(c.op) && specsOf(c).some((s) => s.shape.includes(0));
  return e instanceof TypeError && /expected a float32 or float64 tensor|expected tensors of the same dtype/.test(e.message) && ((c.outs ?? []).every((o) => o.values.length === 0) || emptyLinear || emptyProduct);
}

/** Replays one case; null when ringtorch agrees with PyTorch (or differs as documented). */
export function replayCase(c: FuzzCase): Difference | null {
  if (documentedDifference(c)) return null;
  const call = OPS[c.op];
  if (!call) return { kind: "no replayer entry", detail: `op ${c.op} is not in tools/fuzz/ops.ts` };
  let args: Decoded[];
  let kw: Record<string, Decoded>;
  try {
    args = c.args.map(decode);
    kw = Object.fromEntries(Object.entries(c.kw).map(([k, v]) => [k, decode(v)]));
  } catch (e) {
    return { kind: "decode error", detail: message(e) };
  }
  const bases = [...args.flatMap((a) => a.bases), ...Object.values(kw).flatMap((a) => a.bases)];
  let result: unknown;
  try {
    result = call(
      args.map((a) => a.value),
      Object.fromEntries(Object.entries(kw).map(([k, v]) => [k, v.value])),
    );
  } catch (e) {
    if (c.error !== undefined || emptyDTypeCheck(c, e)) return null;
    return { kind: "raised", detail: message(e) };
  }
  if (c.error !== undefined) return { kind: "should raise", detail: `PyTorch: ${c.error}` };
  const outs = Array.isArray(result) ? result : [result];
  if (outs.length !== c.outs!.length) return { kind: "output count", detail: `got ${outs.length}, expected ${c.outs!.length}` };
  const accept = c.op === "groupNorm" || c.op === "batchNorm" ? either(ACCEPTED[c.op] ?? (() => false), normForwardTolerance(c)) : ACCEPTED[c.op] ?? (c.op === "var" || c.op === "std" ? momentTolerance(c) : undefined);
  for (let i = 0; i < outs.length; i++) {
    // A composed op in bfloat16 (a loss) rounds once in ringtorch and after each step in PyTorch
    // (mseLoss's difference, then its square): up to two bfloat16 ulps apart.
    const composed = c.outs![i].dtype === "bfloat16" && /Loss$|^crossEntropy$/.test(c.op);
    const d = compareTensor(outs[i], c.outs![i], "output", composed ? 3 : 1, accept);
    if (d) return d;
    const rg = (outs[i] as Tensor).requiresGrad;
    if (c.outs![i].rg !== undefined && rg !== c.outs![i].rg) return { kind: "requiresGrad", detail: `got ${rg}, expected ${c.outs![i].rg}` };
  }
  if (c.after) {
    for (let i = 0; i < c.after.length; i++) {
      const d = compareTensor(bases[i], c.after[i], "in-place input after");
      if (d) return d;
    }
  }
  if (c.gout || c.gradError) {
    const d = compareGrads(c, outs[0] as Tensor, bases);
    if (d || c.ggw === undefined) return d;
    return compareSecondOrder(c);
  }
  return null;
}

/** Replays the case again with createGraph and compares the gradients of Σ grad·w to PyTorch's. */
function compareSecondOrder(c: FuzzCase): Difference | null {
  const args = c.args.map(decode);
  const kw = Object.fromEntries(Object.entries(c.kw).map(([k, v]) => [k, decode(v)]));
  const leaves = [...args.flatMap((a) => a.bases), ...Object.values(kw).flatMap((a) => a.bases)].filter((b) => b.requiresGrad);
  try {
    const result = OPS[c.op](args.map((a) => a.value), Object.fromEntries(Object.entries(kw).map(([k, v]) => [k, v.value])));
    const out = (Array.isArray(result) ? result[0] : result) as Tensor;
    const gout = rt.tensor(Float64Array.from(c.gout!.map(num)), { dtype: out.dtype, shape: [...out.shape] });
    const grads = rt.autograd.grad(out, leaves, gout, { createGraph: true, allowUnused: true });
    let total: Tensor | null = null;
    grads.forEach((g, i) => {
      if (!g || !g.requiresGrad) return;
      const term = rt.sum(rt.mul(g, rt.tensor(Float64Array.from(c.ggw![i]), { dtype: g.dtype, shape: [...g.shape] })));
      total = total ? rt.add(total, term) : term;
    });
    if (total === null) {
      if (c.gg === null) return null;
      // PyTorch's gradients have a graph; ringtorch's may legitimately not when the second derivative is zero.
      return c.gg!.every((e) => e === null || isZeros(e)) ? null : { kind: "double backward: no graph", detail: "the first-order gradients do not require grad" };
    }
    const gg = rt.autograd.grad(total, leaves, null, { allowUnused: true });
    for (let i = 0; i < leaves.length; i++) {
      const e = c.gg ? c.gg[i] : null;
      const g = gg[i];
      if (e === null || g === null) {
        if ((e === null || isZeros(e)) && (g === null || Array.from(flatValues(g)).every((v) => v === 0))) continue;
        return { kind: "double backward presence", detail: `leaf ${i}: got ${g === null ? "none" : "a gradient"}, expected ${e === null ? "none" : "a gradient"}` };
      }
      const accept = c.op === "norm" || c.op === "vectorNorm" ? either(gradAccepted(c, true)!, normSecondOrderTolerance(c)) : gradAccepted(c, true);
      const d = compareTensor(g, e, "double backward", 10, accept, gradTolerance(c, e));
      if (d) return { kind: d.kind, detail: `leaf ${i}: ${d.detail}` };
    }
    return null;
  } catch (e) {
    return { kind: "double backward raised", detail: message(e) };
  }
}

/**
 * The 2-norm's second derivative adds terms of size |w|·|g|/‖x‖ that cancel (exactly, for a norm
 * of one element): at a tiny norm (‖1e-30‖) both results are that cancellation's rounding noise
 * (PyTorch gives -3e23 where the exact value is 0). The absolute tolerance is 8 ulps of the largest
 * such term, so it only loosens where a norm is tiny.
 */
function normSecondOrderTolerance(c: FuzzCase): (a: number, e: number) => boolean {
  const norms = c.outs![0].values.map(num).filter((v) => Number.isFinite(v) && v !== 0).map(Math.abs);
  const g = Math.max(0, ...c.gout!.map((v) => Math.abs(num(v))).filter(Number.isFinite));
  const w = Math.max(0, ...c.ggw!.flat().map(Math.abs));
  const eps = c.outs![0].dtype === "float64" ? 2 ** -52 : 2 ** -23;
  const atol = norms.length ? (8 * eps * g * w) / Math.min(...norms) : 0;
  return (a, e) => Number.isFinite(a) && Number.isFinite(e) && Math.abs(a - e) <= atol;
}

/**
 * PyTorch's backward formulas compute in their inputs' dtypes (atan2's self·self of a bfloat16 input
 * is rounded to bfloat16 even when the result is float64): with a bfloat16 input, gradients are
 * compared at bfloat16's tolerance.
 */
function gradTolerance(c: FuzzCase, e: Encoded): rt.DType {
  if (specsOf(c).some((s) => s.dtype === "bfloat16") || c.kw.dtype === "bfloat16") return "bfloat16";
  // An op told to compute in float32 (cumprod(x64, { dtype: "float32" })) has float32's rounding in a float64 gradient.
  return c.kw.dtype === "float32" && e.dtype === "float64" ? "float32" : e.dtype;
}

function either(p: (a: number, e: number) => boolean, q: (a: number, e: number) => boolean): (a: number, e: number) => boolean {
  return (a, e) => p(a, e) || q(a, e);
}

function isZeros(e: Encoded): boolean {
  return e.values.every((v) => num(v) === 0);
}

function compareGrads(c: FuzzCase, out: Tensor, bases: Tensor[]): Difference | null {
  try {
    if (c.gradError !== undefined) {
      out.backward(rt.zerosLike(out));
      return { kind: "backward should raise", detail: `PyTorch: ${c.gradError}` };
    }
    const gout = rt.tensor(Float64Array.from(c.gout!.map(num)), { dtype: out.dtype, shape: [...out.shape] });
    out.backward(gout);
  } catch (e) {
    if (c.gradError !== undefined) return null;
    return { kind: "backward raised", detail: message(e) };
  }
  const leaves = bases.filter((b) => b.requiresGrad);
  for (let i = 0; i < leaves.length; i++) {
    const e = c.grads![i];
    const g = leaves[i].grad;
    if (e === null || g === null) {
      if ((e === null && g === null) || (e !== null && isZeros(e)) || (g !== null && flatValues(g).length === 0)) continue;
      if (g !== null && Array.from(flatValues(g)).every((v) => v === 0)) continue;
      return { kind: "grad presence", detail: `leaf ${i}: got ${g === null ? "none" : "a gradient"}, expected ${e === null ? "none" : "a gradient"}` };
    }
    // Gradients go through more arithmetic than forward values: ten times the tolerance.
    const d = compareTensor(g, e, `grad`, 10, NORMS.has(c.op) ? either(gradAccepted(c) ?? (() => false), layerNormTolerance(c)) : gradAccepted(c) ?? (c.op === "var" ? momentTolerance(c, true) : undefined), gradTolerance(c, e));
    if (d) return { kind: d.kind, detail: `leaf ${i}: ${d.detail}` };
  }
  return null;
}

/** A short description of a case's inputs for reports. */
export function describeCase(c: FuzzCase): string {
  const show = (a: unknown): string => {
    if (a && typeof a === "object" && !Array.isArray(a) && "T" in a) {
      const s = (a as { T: TensorSpec }).T;
      const view = s.view.length ? `.${s.view[0][0]}` : "";
      return `${s.dtype}[${s.shape}]${view}${s.grad ? "^" : ""}`;
    }
    if (Array.isArray(a)) return `[${a.map(show).join(",")}]`;
    return JSON.stringify(a);
  };
  const kw = Object.entries(c.kw).map(([k, v]) => `${k}=${show(v)}`);
  return `${c.op}(${[...c.args.map(show), ...kw].join(", ")})`;
}
