import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { installMethods } from "./install.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    tril(diagonal?: number): Tensor;
    triu(diagonal?: number): Tensor;
  }
}

function triangle(x: Tensor, diagonal: number, upper: boolean): Tensor {
  const name = upper ? "triu" : "tril";
  assertTensor(x, name);
  if (x.ndim < 2) throw new RangeError(`${name}: expected a tensor of at least 2 dims (a matrix or a batch of them), got shape ${formatShape(x.shape)}`);
  if (!Number.isInteger(diagonal)) throw new TypeError(`${name}: diagonal must be an integer, got ${diagonal}`);
  const rows = x.shape[x.ndim - 2];
  const cols = x.shape[x.ndim - 1];
  const batch = rows * cols === 0 ? 0 : x.numel / (rows * cols);
  const src = contiguousData(x);
  const out = emptyTensor(x.dtype, x.shape);
  getBackend().triangle(src.storage.data.subarray(src.offset), batch, rows, cols, diagonal, upper, out.storage.data);
  // The op is a fixed 0/1 mask, so its gradient is the same mask applied to the gradient.
  return record(out, upper ? "TriuBackward" : "TrilBackward", [x], (g) => [triangle(g, diagonal, upper)]);
}

/** The lower triangle of the last two dims (column − row ≤ diagonal), zero elsewhere. */
export function tril(x: Tensor, diagonal = 0): Tensor {
  return triangle(x, diagonal, false);
}

/** The upper triangle of the last two dims (column − row ≥ diagonal), zero elsewhere. */
export function triu(x: Tensor, diagonal = 0): Tensor {
  return triangle(x, diagonal, true);
}

installMethods({ tril, triu });
