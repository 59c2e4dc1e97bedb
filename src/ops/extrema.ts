import type { ReduceOp } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape, normalizeDim } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to, zeros } from "./creation.js";
import { div, eq, logicalAnd, logicalOr, mul, ne } from "./elementwise.js";
import { scatterAdd } from "./gather.js";
import { splitAround } from "./indexing.js";
import { installMethods } from "./install.js";
import { sum } from "./reduction.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape, unsqueeze } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

/** The result of max/min along a dim: the extreme values and where they sit (torch.return_types.max). */
export interface ValuesIndices {
  values: Tensor;
  indices: Tensor;
}

declare module "../tensor/tensor.js" {
  interface Tensor {
    max(): Tensor;
    max(dim: number, keepdim?: boolean): ValuesIndices;
    min(): Tensor;
    min(dim: number, keepdim?: boolean): ValuesIndices;
    argmax(dim?: number | null, keepdim?: boolean): Tensor;
    argmin(dim?: number | null, keepdim?: boolean): Tensor;
  }
}

/** Runs the backend's max/min over one dim of a contiguous copy: values and int32 indices, dim kept as 1. */
function extremeAlong(op: "max" | "min", x: Tensor, d: number, name: string): { values: Tensor; indices: Tensor } {
  if (x.shape[d] === 0) {
    throw new RangeError(`${name}: cannot reduce dim ${d} of size 0 (shape ${formatShape(x.shape)}); there is no ${op === "max" ? "largest" : "smallest"} element`);
  }
  const [outer, size, inner] = splitAround(x.shape, d);
  const kept = x.shape.map((s, i) => (i === d ? 1 : s));
  const src = contiguousData(x);
  const values = emptyTensor(x.dtype, kept);
  const indices = emptyTensor("int32", kept);
  getBackend().reduce(op as ReduceOp, src.storage.data, src.offset, outer, size, inner, values.storage.data, indices.storage.data as Int32Array);
  return { values, indices };
}

function checkComparable(x: Tensor, name: string): void {
  assertTensor(x, name);
  if (x.dtype === "bfloat16") throw new TypeError(`${name}: bfloat16 tensors are storage only; convert with .float() first`);
}

function extremum(op: "max" | "min", x: Tensor, dim?: number, keepdim = false): Tensor | ValuesIndices {
  const name = op;
  checkComparable(x, name);
  if (dim === undefined || dim === null) {
    if (x.numel === 0) throw new RangeError(`${name}: the tensor is empty (shape ${formatShape(x.shape)}); pass a dim to reduce a non-empty one`);
    const flat = reshape(x.detach(), [x.numel]);
    const values = reshape(extremeAlong(op, flat, 0, name).values, []);
    // Ties (NaN included) share the gradient evenly, as PyTorch's max()/min() without a dim do.
    return record(values, op === "max" ? "MaxBackward" : "MinBackward", [x], (g) => {
      const v = values.detach();
      const hits = to(logicalOr(eq(x, v), logicalAnd(ne(x, x), ne(v, v))), g.dtype);
      return [div(mul(hits, g), sum(hits))];
    });
  }
  const d = normalizeDim(dim, x.ndim, name);
  const { values, indices } = extremeAlong(op, x, d, name);
  const outShape = keepdim ? values.shape : x.shape.filter((_, i) => i !== d);
  const v = reshape(values, outShape);
  const idx = reshape(indices, outShape);
  const shape = x.shape;
  // The whole gradient goes to the reported index, as PyTorch's max(dim) does (even with ties).
  const out = record(v, op === "max" ? "MaxBackward" : "MinBackward", [x], (g) => {
    const gk = keepdim || x.ndim === 0 ? g : unsqueeze(g, d);
    const ik = keepdim || x.ndim === 0 ? idx : unsqueeze(idx, d);
    return [scatterAdd(zeros(shape, { dtype: g.dtype }), d, ik, gk)];
  });
  return { values: out, indices: idx };
}

export function max(x: Tensor): Tensor;
export function max(x: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function max(x: Tensor, dim?: number, keepdim = false): Tensor | ValuesIndices {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(max, [x, ...(dim === undefined ? [] : [dim, keepdim])]);
  return extremum("max", x, dim, keepdim);
}

export function min(x: Tensor): Tensor;
export function min(x: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function min(x: Tensor, dim?: number, keepdim = false): Tensor | ValuesIndices {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(min, [x, ...(dim === undefined ? [] : [dim, keepdim])]);
  return extremum("min", x, dim, keepdim);
}

function argExtremum(op: "max" | "min", x: Tensor, dim: number | null | undefined, keepdim: boolean): Tensor {
  const name = op === "max" ? "argmax" : "argmin";
  checkComparable(x, name);
  if (x.dtype === "bool") throw new TypeError(`${name}: bool tensors are not supported (as PyTorch); convert with .to("int32") first`);
  if (dim === undefined || dim === null) {
    if (x.numel === 0) throw new RangeError(`${name}: the tensor is empty (shape ${formatShape(x.shape)}); pass a dim to reduce a non-empty one`);
    const { indices } = extremeAlong(op, reshape(x.detach(), [x.numel]), 0, name);
    return reshape(indices, keepdim ? x.shape.map(() => 1) : []);
  }
  const d = normalizeDim(dim, x.ndim, name);
  const { indices } = extremeAlong(op, x.detach(), d, name);
  return keepdim ? indices : reshape(indices, x.shape.filter((_, i) => i !== d));
}

/** The flat index (no dim) or per-dim index of the first largest element; NaN counts as largest. */
export function argmax(x: Tensor, dim?: number | null, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(argmax, [x, dim, keepdim]);
  return argExtremum("max", x, dim, keepdim);
}

export function argmin(x: Tensor, dim?: number | null, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(argmin, [x, dim, keepdim]);
  return argExtremum("min", x, dim, keepdim);
}

installMethods({ max, min, argmax, argmin });
