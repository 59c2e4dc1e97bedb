import type { StridedView } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import type { DType } from "../tensor/dtype.js";
import { allocate } from "../tensor/storage.js";
import { Tensor } from "../tensor/tensor.js";
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

/** t itself when contiguous and of `dtype`, else a contiguous copy (no autograd recording). */
export function contiguousData(t: Tensor, dtype: DType = t.dtype): Tensor {
  if (t.dtype === dtype && t.isContiguous()) return t;
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

/** Marks an in-place write: refuses tensors in a graph, then bumps the version counter. */
export function beginInPlace(t: Tensor, op: string): void {
  if (t.requiresGrad && isGradEnabled()) {
    throw new Error(
      `${op}: an in-place op on a tensor that requires grad would corrupt the gradient (${t.describe()}); ` +
        "use the out-of-place op, or wrap the update in noGrad()",
    );
  }
  if (!t.isContiguous()) {
    throw new Error(`${op}: in-place ops need a contiguous tensor, got shape ${formatShape(t.shape)} with strides ${formatShape(t.strides)}; call contiguous() first`);
  }
  t.storage.version++;
}
