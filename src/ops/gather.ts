import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape, normalizeDim, type Shape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { zeros } from "./creation.js";
import { splitAround } from "./indexing.js";
import { flatOffsets } from "./flat_offsets.js";
import { installMethods } from "./install.js";
import { assertSameDType, assertTensor, contiguousData, emptyTensor, viewOf } from "./util.js";
import { narrow } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    gather(dim: number, index: Tensor): Tensor;
    scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor;
  }
}

/**
 * Checks an index for gather/scatterAdd along `d` of a tensor of `shape` (PyTorch's rules: same
 * number of dims, no larger than `shape` off `d`, values in [0, shape[d])) and returns them.
 */
function checkIndex(index: Tensor, shape: Shape, d: number, op: string): Int32Array {
  assertTensor(index, op, "index");
  if (index.dtype !== "int32") throw new TypeError(`${op}: expected an int32 index, got ${index.dtype} with shape ${formatShape(index.shape)}`);
  // An empty index is not checked against the sizes, as in PyTorch.
  if (index.ndim !== shape.length || (index.numel > 0 && index.shape.some((s, i) => i !== d && s > shape[i]))) {
    throw new RangeError(
      `${op}: the index of shape ${formatShape(index.shape)} must have ${shape.length} dims and be no larger than ${formatShape(shape)} outside dim ${d}`,
    );
  }
  const c = contiguousData(index);
  const values = (c.storage.data as Int32Array).subarray(c.offset, c.offset + index.numel);
  const size = shape.length === 0 ? 1 : shape[d];
  for (let i = 0; i < values.length; i++) {
    if (values[i] < 0 || values[i] >= size) {
      throw new RangeError(`${op}: index ${values[i]} (at flat position ${i}) is out of range for dim ${d} of size ${size} in ${formatShape(shape)}`);
    }
  }
  return values;
}

/** Whether the index covers the target everywhere except along d (the backend's own layout). */
function sameOffDim(indexShape: Shape, shape: Shape, d: number): boolean {
  return indexShape.every((s, i) => i === d || s === shape[i]);
}

/** torch.gather: picks along dim by index; for dim 1 of a 3-D x, out[i][j][k] = x[i][index[i][j][k]][k]. */
export function gather(x: Tensor, dim: number, index: Tensor): Tensor {
  assertTensor(x, "gather");
  const d = normalizeDim(dim, x.ndim, "gather");
  const idx = checkIndex(index, x.shape, d, "gather");
  const src = contiguousData(x);
  const out = emptyTensor(x.dtype, index.shape);
  const data = src.storage.data.subarray(src.offset);
  if (sameOffDim(index.shape, x.shape, d)) {
    const [outer, size, inner] = splitAround(x.shape, d);
    getBackend().gather(data, outer, size, inner, idx, index.shape[d] ?? 1, out.storage.data);
  } else {
    getBackend().indexSelect(data, 1, x.numel, 1, flatOffsets(idx, index.shape, x.shape, d), out.storage.data);
  }
  const shape = x.shape;
  return record(out, "GatherBackward", [x], (g) => [scatterAdd(zeros(shape, { dtype: g.dtype }), d, index, g)]);
}

/**
 * torch.scatter_add (out of place): a copy of x with src[i][j][k] added at x[i][index[i][j][k]][k]
 * along dim. Only the part of src that the index covers is used, as in PyTorch.
 */
export function scatterAdd(x: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  if (hasBFloat16(x, dim, index, src)) return inFloat32(scatterAdd, [x, dim, index, src]);
  assertTensor(x, "scatterAdd");
  assertTensor(src, "scatterAdd", "src");
  assertSameDType(x, src, "scatterAdd");
  const d = normalizeDim(dim, x.ndim, "scatterAdd");
  const idx = checkIndex(index, x.shape, d, "scatterAdd");
  if (src.ndim !== index.ndim || src.shape.some((s, i) => s < index.shape[i])) {
    throw new RangeError(`scatterAdd: src of shape ${formatShape(src.shape)} must be at least as large as the index ${formatShape(index.shape)} in every dim`);
  }
  // Narrowing through the public view op lets autograd give the uncovered part of src a zero gradient.
  let covered = src;
  index.shape.forEach((size, i) => {
    if (covered.shape[i] !== size) covered = narrow(covered, i, 0, size);
  });
  const out = emptyTensor(x.dtype, x.shape);
  const backend = getBackend();
  backend.copy(viewOf(x), x.shape, out.storage.data, 0);
  const c = contiguousData(covered);
  const values = c.storage.data.subarray(c.offset);
  if (sameOffDim(index.shape, x.shape, d)) {
    const [outer, size, inner] = splitAround(x.shape, d);
    backend.scatterAdd(values, outer, size, inner, idx, index.shape[d] ?? 1, out.storage.data);
  } else {
    backend.indexAdd(values, 1, x.numel, 1, flatOffsets(idx, index.shape, x.shape, d), out.storage.data);
  }
  return record(out, "ScatterAddBackward", [x, covered], (g) => [x.requiresGrad ? g : null, covered.requiresGrad ? gather(g, d, index) : null]);
}

installMethods({ gather, scatterAdd });
