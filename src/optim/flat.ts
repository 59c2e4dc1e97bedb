import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { contiguousData } from "../ops/util.js";

export type FloatArray = Float32Array | Float64Array;

/**
 * The live elements of a contiguous float tensor, for the backend's fused optimizer kernels
 * (which update in place). Parameters and optimizer state are always contiguous.
 */
export function flatData(t: Tensor, what: string): FloatArray {
  if (!t.isContiguous()) throw new Error(`${what}: expected a contiguous tensor, got shape ${formatShape(t.shape)} with strides ${formatShape(t.strides)}`);
  return t.storage.data.subarray(t.offset, t.offset + t.numel) as FloatArray;
}

/** The gradient's elements in the parameter's dtype, copied only when its layout or dtype differ. */
export function gradData(p: Tensor, what: string): FloatArray {
  return flatData(contiguousData(p.grad!, p.dtype), what);
}

/** Marks in-place optimizer writes, so autograd can tell a saved parameter changed under it. */
export function bumpVersion(...tensors: (Tensor | null | undefined)[]): void {
  for (const t of tensors) if (t) t.storage.version++;
}
