import { getBackend } from "../backend/index.js";
import { formatShape, normalizeDim } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import type { ValuesIndices } from "./extrema.js";
import { gather } from "./gather.js";
import { splitAround } from "./indexing.js";
import { installMethods } from "./install.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { narrow, reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    sort(dim?: number, descending?: boolean, options?: SortOptions): ValuesIndices;
    argsort(dim?: number, descending?: boolean, options?: SortOptions): Tensor;
    topk(k: number, dim?: number, largest?: boolean, sorted?: boolean): ValuesIndices;
  }
}

export interface SortOptions {
  /** Keep equal elements in their original order. ringtorch's sort is always stable; accepted for PyTorch's keyword. */
  stable?: boolean;
}

function checkSortable(x: Tensor, op: string): void {
  assertTensor(x, op);
  if (x.dtype === "bfloat16") throw new TypeError(`${op}: bfloat16 tensors are storage only; convert with .float() first`);
}

/** The int32 positions that sort x along d (stable; NaN largest), computed by the backend. */
function sortIndices(x: Tensor, d: number, descending: boolean): Tensor {
  const src = contiguousData(x, x.dtype === "bool" ? "int32" : x.dtype);
  const [outer, size, inner] = splitAround(x.shape, d);
  const values = emptyTensor(src.dtype, x.shape);
  const indices = emptyTensor("int32", x.shape);
  getBackend().sort(src.storage.data, src.offset, outer, size, inner, descending, values.storage.data, indices.storage.data as Int32Array);
  return indices;
}

function checkFlag(v: unknown, name: string, op: string): boolean {
  if (typeof v !== "boolean") throw new TypeError(`${op}: ${name} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * torch.sort: values and int32 indices along dim (the last by default), ascending unless
 * descending. NaN sorts as the largest value. Always stable. The values are gathered from x, so
 * the gradient flows back to the positions they came from.
 */
export function sort(x: Tensor, dim = -1, descending = false, options: SortOptions = {}): ValuesIndices {
  if (hasBFloat16(x, dim, descending, options)) return inFloat32(sort, [x, dim, descending, options]);
  const op = "sort";
  checkSortable(x, op);
  checkOptions(op, options, ["stable"]);
  checkFlag(descending, "descending", op);
  if (options.stable !== undefined) checkFlag(options.stable, "stable", op);
  if (x.ndim === 0) {
    normalizeDim(dim, 1, op);
    return { values: reshape(x, []), indices: reshape(emptyZero(), []) };
  }
  const d = normalizeDim(dim, x.ndim, op);
  const indices = sortIndices(x.detach(), d, descending);
  return { values: gather(x, d, indices), indices };
}

function emptyZero(): Tensor {
  const t = emptyTensor("int32", [1]);
  t.storage.data[0] = 0;
  return t;
}

/** torch.argsort: the int32 indices that sort x along dim. */
export function argsort(x: Tensor, dim = -1, descending = false, options: SortOptions = {}): Tensor {
  if (hasBFloat16(x, dim, descending, options)) return inFloat32(argsort, [x, dim, descending, options]);
  return sort(x.detach(), dim, descending, options).indices;
}

/**
 * torch.topk: the k largest (or, with largest=false, smallest) elements along dim and their
 * int32 indices, in sorted order. Ties keep their original order. The gradient flows to the
 * positions picked.
 */
export function topk(x: Tensor, k: number, dim = -1, largest = true, sorted = true): ValuesIndices {
  if (hasBFloat16(x, k, dim, largest, sorted)) return inFloat32(topk, [x, k, dim, largest, sorted]);
  const op = "topk";
  checkSortable(x, op);
  if (x.dtype === "bool") throw new TypeError(`${op}: bool tensors are not supported (PyTorch's topk refuses them too); convert with .int()`);
  checkFlag(largest, "largest", op);
  checkFlag(sorted, "sorted", op);
  const size = x.ndim === 0 ? 1 : x.shape[normalizeDim(dim, x.ndim, op)];
  if (!Number.isInteger(k) || k < 0 || k > size) {
    throw new RangeError(`topk: k must be an integer in [0, ${size}] (the size of dim ${dim} of ${formatShape(x.shape)}), got ${k}`);
  }
  if (x.ndim === 0) return sort(x, dim, largest);
  const d = normalizeDim(dim, x.ndim, op);
  const indices = narrow(sortIndices(x.detach(), d, largest), d, 0, k).contiguous();
  return { values: gather(x, d, indices), indices };
}

installMethods({ sort, argsort, topk });
