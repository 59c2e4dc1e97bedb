import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape, normalizeDim } from "../tensor/shape.js";
import { Tensor } from "../tensor/tensor.js";
import { zeros } from "./creation.js";
import { assertTensor, beginInPlace, contiguousData, emptyTensor } from "./util.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

/** The [outer, size, inner] split of a shape around one dim, as the backend's kernels take it. */
export function splitAround(shape: readonly number[], dim: number): [number, number, number] {
  let outer = 1;
  let inner = 1;
  for (let i = 0; i < dim; i++) outer *= shape[i];
  for (let i = dim + 1; i < shape.length; i++) inner *= shape[i];
  return [outer, shape[dim] ?? 1, inner];
}

/** Checks every index against the dim size and copies them into an Int32Array. */
export function checkedIndex(index: Tensor | Int32Array | readonly number[], size: number, op: string): Int32Array {
  let values: Int32Array;
  if (index instanceof Tensor) {
    if (index.dtype !== "int32") throw new TypeError(`${op}: expected an int32 index tensor, got ${index.dtype} with shape ${formatShape(index.shape)}`);
    values = contiguousData(index).storage.data.subarray(index.isContiguous() ? index.offset : 0) as Int32Array;
    values = values.subarray(0, index.numel);
  } else values = index instanceof Int32Array ? index : Int32Array.from(index);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v < 0 || v >= size || !Number.isInteger(v)) {
      throw new RangeError(`${op}: index ${v} (at position ${i}) is out of range for a dim of size ${size}`);
    }
  }
  return values;
}

/** torch.index_select: the entries of `dim` listed by a 1-D int32 index. */
export function indexSelect(x: Tensor, dim: number, index: Tensor | Int32Array | readonly number[]): Tensor {
  if (hasBFloat16(x, dim, index)) return inFloat32(indexSelect, [x, dim, index]);
  assertTensor(x, "indexSelect");
  const d = normalizeDim(dim, x.ndim, "indexSelect");
  if (index instanceof Tensor && index.ndim > 1) throw new RangeError(`indexSelect: the index must be 1-D, got shape ${formatShape(index.shape)}`);
  const [outer, size, inner] = splitAround(x.shape, d);
  const idx = checkedIndex(index, size, "indexSelect");
  if (x.ndim === 0 && idx.length !== 1) throw new RangeError(`indexSelect: a 0-d tensor takes an index of exactly 1 value, got ${idx.length}`);
  const shape = [...x.shape];
  if (shape.length > 0) shape[d] = idx.length;
  const src = contiguousData(x);
  const out = emptyTensor(x.dtype, shape);
  getBackend().indexSelect(src.storage.data.subarray(src.offset), outer, size, inner, idx, out.storage.data);
  const from = x.shape;
  return record(out, "IndexSelectBackward", [x], (g) => [indexAddInto(zeros(from, { dtype: g.dtype }), d, idx, g)]);
}

/**
 * out[..., index[j], ...] += src[..., j, ...] along dim, in place on a fresh contiguous `out`
 * (the adjoint of indexSelect and of slicing). Differentiable with respect to src.
 */
export function indexAddInto(out: Tensor, dim: number, index: Int32Array, src: Tensor): Tensor {
  const d = normalizeDim(dim, out.ndim, "indexAdd");
  const [outer, size, inner] = splitAround(out.shape, d);
  const [so, sk, si] = splitAround(src.shape, d);
  if (so !== outer || si !== inner || sk !== index.length) {
    throw new RangeError(`indexAdd: a source of shape ${formatShape(src.shape)} does not match ${index.length} indices into ${formatShape(out.shape)} along dim ${d}`);
  }
  beginInPlace(out, "indexAdd");
  const g = contiguousData(src);
  getBackend().indexAdd(g.storage.data.subarray(g.offset), outer, size, inner, index, out.storage.data.subarray(out.offset));
  return record(out, "IndexAddBackward", [src], (grad) => [indexSelect(grad, d, index)]);
}
