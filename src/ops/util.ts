import type { StridedView } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import type { DType } from "../tensor/dtype.js";
import { allocate, inferenceState } from "../tensor/storage.js";
import { SHARED_LAYOUT, Tensor } from "../tensor/tensor.js";
import { formatShape, type Shape } from "../tensor/shape.js";
import { isGradEnabled } from "../autograd/grad_mode.js";

/** The backend's view of a tensor's memory. */
export function viewOf(t: Tensor): StridedView {
  return { data: t.storage.data, offset: t.offset, strides: t.strides };
}

/** A new tensor whose contents the caller will overwrite. */
export function emptyTensor(dtype: DType, shape: Shape): Tensor {
  let n = 1;
  for (const d of shape) n *= d;
  return new Tensor(allocate(dtype, n, false), shape);
}

/**
 * A new tensor of x's shape whose contents the caller will overwrite. When x's strides are the dense
 * ones of its shape, the new tensor shares x's (frozen) shape and strides arrays: an elementwise
 * op's output then costs one allocation of memory and no layout arrays.
 */
export function emptyLike(x: Tensor, dtype: DType = x.dtype): Tensor {
  if (x.hasDenseStrides()) return new Tensor(allocate(dtype, x.numel, false), x.shape, x.strides, 0, SHARED_LAYOUT);
  return emptyTensor(dtype, x.shape);
}

/** t itself when contiguous and of `dtype`, else a contiguous copy (no autograd recording). */
export function contiguousData(t: Tensor, dtype: DType = t.dtype): Tensor {
  // An empty view may sit at an offset past its storage's end; kernels get a fresh empty tensor.
  if (t.numel === 0) return emptyTensor(dtype, t.shape);
  if (t.dtype === dtype && (t.hasDenseStrides() || t.isContiguous())) return t;
  const out = emptyTensor(dtype, t.shape);
  getBackend().copy(viewOf(t), t.shape, out.storage.data, 0);
  return out;
}

export function assertFloating(t: Tensor, op: string): void {
  if (t.dtype !== "float32" && t.dtype !== "float64") {
    throw new TypeError(`${op}: expected a float32 or float64 tensor, got ${t.dtype} with shape ${formatShape(t.shape)}`);
  }
}

export function assertSameDType(a: Tensor, b: Tensor, op: string): void {
  if (a.dtype !== b.dtype) {
    throw new TypeError(`${op}: expected tensors of the same dtype, got ${a.dtype} ${formatShape(a.shape)} and ${b.dtype} ${formatShape(b.shape)}`);
  }
}

export function assertTensor(t: unknown, op: string, what = "input"): asserts t is Tensor {
  if (!(t instanceof Tensor)) throw new TypeError(`${op}: expected ${what} to be a Tensor, got ${describeValue(t)}`);
}

export function describeValue(v: unknown): string {
  if (v instanceof Tensor) return v.describe();
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  return v === null ? "null" : typeof v;
}

/**
 * Marks an in-place write: refuses tensors in a graph and destinations where several elements share
 * one memory location (an expanded view, as PyTorch does), then bumps the version counter.
 * Non-contiguous destinations are allowed: write through `writeInto`.
 */
export function beginInPlace(t: Tensor, op: string, checkOverlap = true): void {
  if (t.storage.inference && !inferenceState.active) {
    throw new Error(`${op}: an in-place update to an inference tensor (${t.describe()}, made under inferenceMode) outside inferenceMode is not allowed, as in PyTorch; clone() it first`);
  }
  if (t.requiresGrad && isGradEnabled()) {
    throw new Error(
      `${op}: an in-place op on a tensor that requires grad would corrupt the gradient (${t.describe()}); ` +
        "use the out-of-place op, or wrap the update in noGrad()",
    );
  }
  if (checkOverlap && t.numel > 1 && t.shape.some((s, i) => s > 1 && t.strides[i] === 0)) {
    throw new Error(
      `${op}: more than one element of the written-to tensor (shape ${formatShape(t.shape)}, strides ${formatShape(t.strides)}) refers to one memory location; clone() it first`,
    );
  }
  t.storage.version++;
}

/**
 * Writes `src` (any dtype, dst's shape or broadcastable to it) into dst's memory, dst possibly a
 * strided view. Dense destinations take the backend's copy; others an index walk in TypeScript.
 */
export function writeInto(dst: Tensor, src: Tensor): void {
  const strides = src.shape.length === dst.shape.length && src.shape.every((s, i) => s === dst.shape[i]) ? src.strides : broadcastViewStrides(src, dst.shape);
  if (dst.isContiguous()) {
    getBackend().copy({ data: src.storage.data, offset: src.offset, strides }, dst.shape, dst.storage.data, dst.offset);
    return;
  }
  const dense = emptyTensor(dst.dtype, dst.shape);
  getBackend().copy({ data: src.storage.data, offset: src.offset, strides }, dst.shape, dense.storage.data, 0);
  const values = dense.storage.data;
  const out = dst.storage.data;
  const nd = dst.shape.length;
  const index = new Array<number>(nd).fill(0);
  let pos = dst.offset;
  for (let i = 0; i < values.length; i++) {
    out[pos] = values[i];
    for (let d = nd - 1; d >= 0; d--) {
      pos += dst.strides[d];
      if (++index[d] < dst.shape[d]) break;
      pos -= dst.strides[d] * dst.shape[d];
      index[d] = 0;
    }
  }
}

function broadcastViewStrides(t: Tensor, target: Shape): number[] {
  const out = new Array<number>(target.length).fill(0);
  const lead = target.length - t.shape.length;
  for (let i = 0; i < t.shape.length; i++) out[lead + i] = t.shape[i] === 1 && target[lead + i] !== 1 ? 0 : t.strides[i];
  return out;
}
