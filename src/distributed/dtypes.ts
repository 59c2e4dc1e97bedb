/**
 * Element types collectives move. bfloat16 is stored as the upper half of a float32 in a
 * Uint16Array; float16 (IEEE half) also lives in a Uint16Array and is chosen explicitly (allReduce's
 * `float16` option), since the array type cannot tell the two apart.
 */
export type CommDType = "float32" | "float64" | "int32" | "bfloat16" | "uint8" | "float16";

export type TypedArray = Float32Array | Float64Array | Int32Array | Uint16Array | Uint8Array;

/** The codes native/comm/comm.h uses. */
export const DTYPE_CODE: Record<CommDType, number> = { float32: 0, float64: 1, int32: 2, bfloat16: 3, uint8: 4, float16: 5 };

export const DTYPE_BYTES: Record<CommDType, number> = { float32: 4, float64: 8, int32: 4, bfloat16: 2, uint8: 1, float16: 2 };

export function dtypeOfArray(data: TypedArray): CommDType {
  if (data instanceof Float32Array) return "float32";
  if (data instanceof Float64Array) return "float64";
  if (data instanceof Int32Array) return "int32";
  if (data instanceof Uint16Array) return "bfloat16";
  if (data instanceof Uint8Array) return "uint8";
  throw new TypeError(`unsupported typed array ${(data as object).constructor.name}`);
}

export function allocate(dtype: CommDType, numel: number, shared = false): TypedArray {
  const bytes = numel * DTYPE_BYTES[dtype];
  const buf = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  switch (dtype) {
    case "float32":
      return new Float32Array(buf);
    case "float64":
      return new Float64Array(buf);
    case "int32":
      return new Int32Array(buf);
    case "bfloat16":
    case "float16":
      return new Uint16Array(buf);
    case "uint8":
      return new Uint8Array(buf);
  }
}
