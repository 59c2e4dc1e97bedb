import type { DType, TypedArray } from "../backend/backend.js";

export type { DType, TypedArray };

export const DTYPES: readonly DType[] = ["float32", "float64", "int32", "bfloat16", "bool"];

type ArrayCtor = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray; BYTES_PER_ELEMENT: number };

const ARRAY_TYPES: Record<DType, ArrayCtor> = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  bfloat16: Uint16Array,
  bool: Uint8Array,
};

export function arrayTypeOf(dtype: DType): ArrayCtor {
  return ARRAY_TYPES[dtype];
}

export function itemSize(dtype: DType): number {
  return ARRAY_TYPES[dtype].BYTES_PER_ELEMENT;
}

export function isFloating(dtype: DType): boolean {
  return dtype === "float32" || dtype === "float64" || dtype === "bfloat16";
}

export function assertDType(value: unknown, where: string): DType {
  if (typeof value === "string" && (DTYPES as readonly string[]).includes(value)) return value as DType;
  throw new TypeError(`${where}: unknown dtype ${JSON.stringify(value)}; expected one of ${DTYPES.join(", ")}`);
}

/**
 * The dtype an op computes in when its tensor operands differ, after PyTorch's promotion
 * lattice restricted to our dtypes: bool < int32 < bfloat16 < float32 < float64.
 */
export function promoteTypes(a: DType, b: DType): DType {
  if (a === b) return a;
  const rank: Record<DType, number> = { bool: 0, int32: 1, bfloat16: 2, float32: 3, float64: 4 };
  return rank[a] >= rank[b] ? a : b;
}

/** The dtype that a Python-style scalar combined with a tensor of `dtype` produces. */
export function promoteWithScalar(dtype: DType, scalar: number | boolean): DType {
  if (typeof scalar === "boolean") return dtype;
  if (!Number.isInteger(scalar) && (dtype === "int32" || dtype === "bool")) return "float32";
  if (dtype === "bool") return "int32";
  return dtype;
}
