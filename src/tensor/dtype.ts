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

type Category = 0 | 1 | 2;
const categoryOf = (d: DType): Category => (d === "bool" ? 0 : d === "int32" ? 1 : 2);

/** PyTorch's combine_categories: a lower-priority result only counts when its category is higher. */
function combine(higher: DType | null, lower: DType | null): DType | null {
  if (higher === null) return lower;
  if (lower === null) return higher;
  if (categoryOf(higher) === 2) return higher;
  if (higher === "bool" || categoryOf(lower) === 2) return promoteTypes(higher, lower);
  return higher;
}

/**
 * The result dtype of an op over tensors and Python-style scalars (torch.result_type): dimensioned
 * tensors decide first, 0-d tensors only when their category (bool < integer < floating) is higher,
 * and scalars last, the same way. JavaScript has one number type, so an integral number counts as an
 * integer scalar and any other (NaN and infinities included) as a float scalar (float32).
 */
export function resultType(operands: readonly ({ dtype: DType; ndim: number } | number | boolean)[]): DType {
  let dim: DType | null = null;
  let zero: DType | null = null;
  let wrapped: DType | null = null;
  for (const o of operands) {
    if (typeof o === "boolean") wrapped = wrapped === null ? "bool" : promoteTypes(wrapped, "bool");
    else if (typeof o === "number") {
      const t: DType = Number.isInteger(o) ? "int32" : "float32";
      wrapped = wrapped === null ? t : promoteTypes(wrapped, t);
    } else if (o.ndim === 0) zero = zero === null ? o.dtype : promoteTypes(zero, o.dtype);
    else dim = dim === null ? o.dtype : promoteTypes(dim, o.dtype);
  }
  return combine(dim, combine(zero, wrapped)) ?? "float32";
}

/** Whether a result of dtype `from` may be written into a tensor of dtype `to` (torch.can_cast). */
export function canCast(from: DType, to: DType): boolean {
  if (categoryOf(from) === 2 && categoryOf(to) < 2) return false;
  if (from !== "bool" && to === "bool") return false;
  return true;
}
