import type { StridedView, TypedArray } from "../backend.js";
import { encoderFor, readerFor } from "./convert.js";

export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * The storage offset of every element of a strided view, in row-major order of `shape`.
 * Materialising them keeps each kernel a plain loop over `i` that is easy to check.
 */
export function offsetsOf(view: Pick<StridedView, "offset" | "strides">, shape: readonly number[]): Float64Array {
  const out = new Float64Array(numelOf(shape));
  if (out.length === 0) return out;
  const ndim = shape.length;
  if (ndim === 0) {
    out[0] = view.offset;
    return out;
  }
  let k = 0;
  const walk = (dim: number, base: number): void => {
    const stride = view.strides[dim];
    if (dim === ndim - 1) {
      for (let i = 0; i < shape[dim]; i++) out[k++] = base + i * stride;
      return;
    }
    for (let i = 0; i < shape[dim]; i++) walk(dim + 1, base + i * stride);
  };
  walk(0, view.offset);
  return out;
}

export function fill(out: TypedArray, outOffset: number, n: number, value: number): void {
  const encoded = encoderFor(out)(value);
  for (let i = 0; i < n; i++) out[outOffset + i] = encoded;
}

export function copy(src: StridedView, shape: readonly number[], out: TypedArray, outOffset: number): void {
  const offsets = offsetsOf(src, shape);
  // Same dtype: move the stored values untouched, so NaN payloads and bfloat16 bits survive.
  if (src.data.constructor === out.constructor) {
    for (let i = 0; i < offsets.length; i++) out[outOffset + i] = src.data[offsets[i]];
    return;
  }
  const read = readerFor(src.data);
  const encode = encoderFor(out);
  for (let i = 0; i < offsets.length; i++) out[outOffset + i] = encode(read(offsets[i]));
}
