import type { TypedArray } from "../backend.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The stored form of a fill value: bool is `!= 0` (NaN is true), bfloat16 is the float32 rounded
 * to its upper 16 bits (nearest even; NaN stays a quiet NaN); the other typed arrays convert on
 * store exactly as the kernels do. A fill is then one TypedArray#fill, which is already native.
 */
export function encodeFill(out: TypedArray, value: number): number {
  if (out instanceof Uint8Array) return value !== 0 ? 1 : 0;
  if (out instanceof Uint16Array) {
    f32[0] = value;
    const bits = u32[0];
    if (Number.isNaN(f32[0])) return (bits >>> 16) | 0x0040;
    return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
  }
  return value;
}
