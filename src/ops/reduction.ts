import { getBackend } from "../backend/index.js";
import { needsGradOf, record } from "../autograd/record.js";
import { formatShape, normalizeDim, shapesEqual, type Shape } from "../tensor/shape.js";
import { SHARED_LAYOUT, Tensor } from "../tensor/tensor.js";
import { allocate } from "../tensor/storage.js";
import { expand, reshape } from "./view.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export type Dims = number | readonly number[] | null | undefined;

/**
 * Sorted, de-duplicated non-negative dims; all dims when none are given or the list is empty (as
 * PyTorch). A 0-d tensor accepts dim 0 or -1 and reduces nothing.
 */
export function reductionDims(dims: Dims, ndim: number, op: string): number[] {
  if (dims === null || dims === undefined || (Array.isArray(dims) && dims.length === 0)) return Array.from({ length: ndim }, (_, i) => i);
  const list = typeof dims === "number" ? [dims] : [...(dims as readonly number[])];
  if (ndim === 0) {
    for (const d of list) normalizeDim(d, 0, op);
    return [];
  }
  const out = [...new Set(list.map((d) => normalizeDim(d, ndim, op)))].sort((a, b) => a - b);
  if (out.length !== list.length) throw new RangeError(`${op}: dim ${formatShape(list)} appears more than once`);
  return out;
}

/** The shape after reducing `dims`, with size-1 dims kept or dropped. */
export function reducedShape(shape: Shape, dims: readonly number[], keepdim: boolean): number[] {
  const out: number[] = [];
  shape.forEach((d, i) => {
    if (!dims.includes(i)) out.push(d);
    else if (keepdim) out.push(1);
  });
  return out;
}

/** Sums one axis of a contiguous tensor with the backend's [outer, size, inner] kernel. */
function sumAxis(x: Tensor, dim: number): Tensor {
  const outer = x.shape.slice(0, dim).reduce((a, b) => a * b, 1);
  const inner = x.shape.slice(dim + 1).reduce((a, b) => a * b, 1);
  const shape = x.shape.map((d, i) => (i === dim ? 1 : d));
  const out = emptyTensor(x.dtype, shape);
  getBackend().reduce("sum", x.storage.data, x.offset, outer, x.shape[dim], inner, out.storage.data, null);
  return out;
}

/** The (frozen, shared) shape and strides of a 0-d result. */
const SCALAR_SHAPE: readonly number[] = Object.freeze([]);

/** The sum over dims (all when omitted); int32 and bool sum to int32. */
export function sum(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  // The whole of a dense float vector: one kernel call into a 0-d tensor (the same single pass as below).
  if (dim === undefined && !keepdim && x instanceof Tensor && x.ndim === 1 && (x.dtype === "float32" || x.dtype === "float64") && x.hasDenseStrides()) {
    const out = new Tensor(allocate(x.dtype, 1, false), SCALAR_SHAPE, SCALAR_SHAPE, 0, SHARED_LAYOUT);
    getBackend().reduce("sum", x.storage.data, x.offset, 1, x.numel, 1, out.storage.data, null);
    return needsGradOf(x) ? record(out, "SumBackward", [x], (g) => [expand(reshape(g, [1]), x.shape)]) : out;
  }
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(sum, [x, dim, keepdim]);
  assertTensor(x, "sum");
  const dims = reductionDims(dim, x.ndim, "sum");
  let acc = contiguousData(x, x.dtype === "bool" ? "int32" : x.dtype);
  // Reducing the highest dim first keeps every intermediate contiguous.
  for (let i = dims.length - 1; i >= 0; i--) acc = sumAxis(acc, dims[i]);
  const outShape = reducedShape(x.shape, dims, keepdim);
  const out = acc.numel === 1 && outShape.length === 0 ? reshape(acc.detach(), []) : reshape(acc.detach(), outShape);
  const kept = reducedShape(x.shape, dims, true);
  return record(out.detach(), "SumBackward", [x], (g) => [expand(reshape(g, kept), x.shape)]);
}

export function mean(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(mean, [x, dim, keepdim]);
  assertTensor(x, "mean");
  if (x.dtype !== "float32" && x.dtype !== "float64") {
    throw new TypeError(`mean: expected a floating point tensor, got ${x.dtype}; convert it with .to("float32") first`);
  }
  const dims = reductionDims(dim, x.ndim, "mean");
  const count = dims.reduce((n, d) => n * x.shape[d], 1);
  return sum(x, dims, keepdim).mul(1 / count);
}

/** Sums a broadcast gradient back to the shape of the input it was broadcast from. */
export function sumToShape(g: Tensor, shape: Shape): Tensor {
  if (shapesEqual(g.shape, shape)) return g;
  const lead = g.ndim - shape.length;
  const dims: number[] = [];
  for (let i = 0; i < g.ndim; i++) if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) dims.push(i);
  const summed = dims.length > 0 ? sum(g, dims, true) : g;
  return reshape(summed, shape);
}

