import type { TypedArray } from "../backend.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float32 value whose upper 16 bits are `bits` (how bfloat16 is stored). */
export function bf16ToFloat(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0];
}

/**
 * Rounds a number to bfloat16 bits: first to float32 (as c10::BFloat16 does for a double), then
 * to the upper 16 bits with round-to-nearest-even. NaN stays NaN (its sign kept, made quiet) —
 * plain rounding could carry a NaN payload into the exponent and turn it into infinity.
 */
export function floatToBf16(value: number): number {
  f32[0] = value;
  const bits = u32[0];
  if (Number.isNaN(f32[0])) return (bits >>> 16) | 0x0040;
  const lsb = (bits >>> 16) & 1;
  return ((bits + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** Reads element `i` of a typed array as a number, decoding bfloat16. */
export function readerFor(array: TypedArray): (i: number) => number {
  if (array instanceof Uint16Array) return (i) => bf16ToFloat(array[i]);
  return (i) => array[i];
}

/**
 * The conversion applied to a number before it is stored into `array`'s dtype: bool is `!= 0`
 * (so NaN is true, as in PyTorch), bfloat16 is rounded, int32 truncates toward zero (the
 * Int32Array store itself does that), floats store as they are.
 */
export function encoderFor(array: TypedArray): (v: number) => number {
  if (array instanceof Uint8Array) return (v) => (v !== 0 ? 1 : 0);
  if (array instanceof Uint16Array) return floatToBf16;
  return (v) => v;
}
