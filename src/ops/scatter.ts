import type { ScatterOp } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { formatShape, normalizeDim, type Shape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { full, onesLike, to, zerosLike } from "./creation.js";
import { copyInPlace, div, eq, logicalAnd, mul, where } from "./elementwise.js";
import { flatOffsets } from "./flat_offsets.js";
import { gather, scatterAdd } from "./gather.js";
import { installMethods } from "./install.js";
import { assertSameDType, assertTensor, beginInPlace, contiguousData, describeValue, emptyTensor, viewOf } from "./util.js";
import { narrow } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    scatter(dim: number, index: Tensor, src: Tensor | number, options?: ScatterOptions): Tensor;
    scatterReduce(dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: ScatterReduceOptions): Tensor;
    scatter_(dim: number, index: Tensor, src: Tensor | number, options?: ScatterOptions): Tensor;
    scatterReduce_(dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: ScatterReduceOptions): Tensor;
  }
}

export interface ScatterOptions {
  /** PyTorch's older scatter(reduce=…): "add" sums into the target, "multiply" multiplies. */
  reduce?: "add" | "multiply" | null;
}

export interface ScatterReduceOptions {
  /** Whether the target's own value takes part in the reduction (true, PyTorch's default). */
  includeSelf?: boolean;
}

export type ScatterReduction = "sum" | "prod" | "mean" | "amax" | "amin";

const REDUCTIONS: readonly ScatterReduction[] = ["sum", "prod", "mean", "amax", "amin"];

/** Checks the index against x and src (PyTorch's rules) and returns its values. */
function checkIndex(x: Tensor, d: number, index: Tensor, srcShape: Shape | null, op: string): Int32Array {
  assertTensor(index, op, "index");
  if (index.dtype !== "int32") throw new TypeError(`${op}: expected an int32 index, got ${index.dtype} with shape ${formatShape(index.shape)}`);
  // PyTorch checks no shapes for an empty index (it writes nothing).
  if (index.numel === 0) return new Int32Array(0);
  if (index.ndim !== x.ndim || index.shape.some((s, i) => i !== d && s > x.shape[i])) {
    throw new RangeError(`${op}: the index of shape ${formatShape(index.shape)} must have ${x.ndim} dims and be no larger than ${formatShape(x.shape)} outside dim ${d}`);
  }
  if (srcShape && (srcShape.length !== index.ndim || index.shape.some((s, i) => s > srcShape[i]))) {
    throw new RangeError(`${op}: src of shape ${formatShape(srcShape)} must have ${index.ndim} dims and be at least as large as the index ${formatShape(index.shape)} in every dim`);
  }
  const c = contiguousData(index);
  const values = (c.storage.data as Int32Array).subarray(c.offset, c.offset + index.numel);
  const size = x.shape[d] ?? 1;
  for (let i = 0; i < values.length; i++) {
    if (values[i] < 0 || values[i] >= size) {
      throw new RangeError(`${op}: index ${values[i]} (at flat position ${i}) is out of range for dim ${d} of size ${size} in ${formatShape(x.shape)}`);
    }
  }
  return values;
}

/** A contiguous copy of x with `op` applied at the targets, recording nothing. */
function scatterRaw(x: Tensor, targets: Int32Array, src: Tensor, op: ScatterOp): Tensor {
  const out = emptyTensor(x.dtype, x.shape);
  const backend = getBackend();
  backend.copy(viewOf(x), x.shape, out.storage.data, 0);
  const s = contiguousData(src);
  backend.scatterReduce(op, s.storage.data.subarray(s.offset, s.offset + src.numel), 1, x.numel, 1, targets, targets.length, out.storage.data);
  return out;
}

/** The part of src the index covers; narrowing through the view op gives the rest a zero gradient. */
function covered(src: Tensor, indexShape: Shape): Tensor {
  let c = src;
  indexShape.forEach((size, i) => {
    // An empty index may be larger than src (PyTorch checks no shapes then): narrow to what exists.
    if (c.shape[i] !== size && i < c.ndim) c = narrow(c, i, 0, Math.min(size, c.shape[i]));
  });
  return c;
}

/**
 * torch.scatter (out of place): a copy of x with src[i][j][k] written at x[i][index[i][j][k]][k]
 * along dim (for dim 1), or the number `src` written at every indexed place. With duplicate indices
 * the last write wins. `reduce: "add" | "multiply"` combines instead (PyTorch's older form).
 */
export function scatter(x: Tensor, dim: number, index: Tensor, src: Tensor | number, options: ScatterOptions = {}): Tensor {
  if (hasBFloat16(x, dim, index, src, options)) return inFloat32(scatter, [x, dim, index, src, options]);
  const op = "scatter";
  assertTensor(x, op);
  checkOptions(op, options, ["reduce"]);
  const reduce = options.reduce ?? null;
  if (reduce !== null && reduce !== "add" && reduce !== "multiply") throw new TypeError(`${op}: reduce must be "add" or "multiply", got ${JSON.stringify(reduce)}`);
  const d = normalizeDim(dim, Math.max(x.ndim, 1), op);
  let source: Tensor;
  if (typeof src === "number") {
    assertTensor(index, op, "index");
    source = full(index.shape, src, { dtype: x.dtype });
  } else {
    if (!(src && typeof src === "object")) throw new TypeError(`${op}: src must be a Tensor or a number, got ${describeValue(src)}`);
    assertTensor(src, op, "src");
    assertSameDType(x, src, op);
    source = src;
  }
  if (reduce !== null) return scatterReduce(x, d, index, source, reduce === "add" ? "sum" : "prod");
  const idx = checkIndex(x, d, index, source.shape, op);
  const part = covered(source, index.shape);
  const out = scatterRaw(x, flatOffsets(idx, index.shape, x.shape, d), part, "assign");
  return record(
    out,
    "ScatterBackward",
    [x, part],
    (g) => [x.requiresGrad ? scatter(g, d, index, 0) : null, part.requiresGrad ? gather(g, d, index) : null],
  );
}

/**
 * torch.scatter_reduce (out of place): reduces src into a copy of x at the indexed places with
 * "sum", "prod", "mean", "amax" or "amin"; includeSelf (true) says whether x's own value takes
 * part. Integer "mean" rounds down, as PyTorch's does. The gradients follow PyTorch's
 * scatter_reduce_backward (amax/amin share the gradient evenly among the elements equal to the
 * result; prod handles a single zero exactly).
 */
export function scatterReduce(x: Tensor, dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options: ScatterReduceOptions = {}): Tensor {
  if (hasBFloat16(x, dim, index, src, reduce, options)) return inFloat32(scatterReduce, [x, dim, index, src, reduce, options]);
  const op = "scatterReduce";
  assertTensor(x, op);
  assertTensor(src, op, "src");
  checkOptions(op, options, ["includeSelf"]);
  if (!REDUCTIONS.includes(reduce)) throw new TypeError(`${op}: reduce must be one of ${REDUCTIONS.map((r) => `"${r}"`).join(", ")}, got ${JSON.stringify(reduce)}`);
  if (x.dtype === "bfloat16") throw new TypeError(`${op}: expected a float32, float64, int32 or bool tensor, got ${x.dtype}`);
  assertSameDType(x, src, op);
  if (x.dtype === "bool") {
    // As PyTorch: over 0/1, sum and amax are "or", prod and amin "and"; the mean of bools is refused.
    if (reduce === "mean") throw new TypeError(`${op}: reduce "mean" is not defined for bool tensors (use "sum", "prod", "amax" or "amin")`);
    return to(scatterReduce(to(x, "int32"), dim, index, to(src, "int32"), reduce, options), "bool");
  }
  const includeSelf = options.includeSelf ?? true;
  const d = normalizeDim(dim, Math.max(x.ndim, 1), op);
  const idx = checkIndex(x, d, index, src.shape, op);
  const part = covered(src, index.shape);
  const targets = flatOffsets(idx, index.shape, x.shape, d);
  const out = noGrad(() => forward(x, targets, part, reduce, includeSelf, index, d));
  // The recorded result enters the prod/amax/amin formulas, so double backward sees its dependence on x and src.
  return record(out, "ScatterReduceBackward", [x, part], (g) => backward(g, x, index, part, out, d, reduce, includeSelf));
}

function identity(reduce: ScatterReduction, dtype: string): number {
  if (reduce === "prod") return 1;
  if (reduce === "amax") return dtype === "int32" ? -2147483648 : -Infinity;
  if (reduce === "amin") return dtype === "int32" ? 2147483647 : Infinity;
  return 0;
}

function forward(x: Tensor, targets: Int32Array, src: Tensor, reduce: ScatterReduction, includeSelf: boolean, index: Tensor, d: number): Tensor {
  const base = includeSelf ? x : scatterRaw(x, targets, full(src.shape, identity(reduce, x.dtype), { dtype: x.dtype }), "assign");
  if (reduce !== "mean") return scatterRaw(base, targets, src, reduce);
  const total = scatterRaw(base, targets, src, "sum");
  const n = counts(x, index, d, includeSelf);
  if (x.dtype !== "int32") return div(total, n);
  const t = total.storage.data;
  const c = n.storage.data;
  for (let i = 0; i < t.length; i++) t[i] = Math.floor(t[i] / c[i]);
  return total;
}

/** How many values were averaged into each element (1 where nothing was scattered). */
function counts(x: Tensor, index: Tensor, d: number, includeSelf: boolean): Tensor {
  const start = includeSelf ? onesLike(x) : zerosLike(x);
  const n = scatterAdd(start, d, index, onesLike(index, { dtype: x.dtype }));
  return where(eq(n, 0), 1, n);
}

function backward(g: Tensor, x: Tensor, index: Tensor, src: Tensor, result: Tensor, d: number, reduce: ScatterReduction, includeSelf: boolean): (Tensor | null)[] {
  let gradSelf: Tensor;
  let gradSrc: Tensor;
  if (reduce === "sum") {
    gradSelf = g;
    gradSrc = gather(g, d, index);
  } else if (reduce === "mean") {
    const scaled = div(g, counts(x, index, d, includeSelf));
    gradSelf = scaled;
    gradSrc = gather(scaled, d, index);
  } else if (reduce === "prod") {
    // Zeros are masked so that a single zero gets the product of the others, as in PyTorch.
    const maskedSelf = where(eq(x, 0), 1, x);
    const maskedSelfResult = scatterReduce(maskedSelf, d, index, src, "prod", { includeSelf });
    gradSelf = div(mul(g, maskedSelfResult), maskedSelf);
    const srcZero = eq(src, 0);
    const zerosPerTarget = gather(scatterAdd(zerosLike(x), d, index, to(srcZero, x.dtype)), d, index);
    const singleZero = logicalAnd(srcZero, eq(zerosPerTarget, 1));
    const maskedSrc = where(singleZero, 1, src);
    const maskedSrcResult = scatterReduce(x, d, index, maskedSrc, "prod", { includeSelf });
    gradSrc = where(
      singleZero,
      gather(mul(g, maskedSrcResult), d, index),
      div(gather(mul(g, result), d, index), where(srcZero, 1, src)),
    );
  } else {
    const value = gather(result, d, index);
    const selfIsResult = to(eq(x, result), g.dtype);
    const srcIsResult = to(eq(src, value), g.dtype);
    const share = div(g, scatterAdd(selfIsResult, d, index, srcIsResult));
    gradSelf = mul(selfIsResult, share);
    gradSrc = mul(srcIsResult, gather(share, d, index));
  }
  if (!includeSelf) gradSelf = scatter(gradSelf, d, index, 0);
  return [x.requiresGrad ? gradSelf : null, src.requiresGrad ? gradSrc : null];
}

/**
 * Tensor.scatter_ and scatterReduce_: the same result written into x (e.g. the one-hot idiom
 * zeros.scatter_(1, labels, 1)). Like every in-place op, refused on a tensor that requires grad.
 */
function inPlace(x: Tensor, name: string, result: () => Tensor): Tensor {
  assertTensor(x, name);
  beginInPlace(x, name);
  return copyInPlace(x, noGrad(result));
}

installMethods({
  scatter,
  scatterReduce,
  scatter_: (x: Tensor, dim: number, index: Tensor, src: Tensor | number, options?: ScatterOptions) => inPlace(x, "scatter_", () => scatter(x, dim, index, src, options)),
  scatterReduce_: (x: Tensor, dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: ScatterReduceOptions) =>
    inPlace(x, "scatterReduce_", () => scatterReduce(x, dim, index, src, reduce, options)),
});
