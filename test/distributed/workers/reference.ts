/** Inputs every rank can rebuild for every other rank, and the one-line references collectives are checked against. */
export type DT = "float32" | "float64" | "int32" | "bfloat16";
export type Op = "sum" | "avg" | "product" | "min" | "max";
export type Arr = Float32Array | Float64Array | Int32Array | Uint16Array;

const PRODUCT_VALUES = [1, -1, 2, 0.5, 1, -2, 1];
const INT_PRODUCT_VALUES = [1, -1, 2, 3, 1, -2, 1];

/** Small exact values: every sum, product, min and max of them is exact in every dtype. */
export function value(dtype: DT, op: Op, rank: number, caseId: number, i: number): number {
  const k = i * 7 + rank * 13 + caseId * 3;
  if (op === "product") return (dtype === "int32" ? INT_PRODUCT_VALUES : PRODUCT_VALUES)[k % 7]!;
  return (k % 11) - 5;
}

export function inputs(dtype: DT, op: Op, rank: number, caseId: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => value(dtype, op, rank, caseId, i));
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function bf16Bits(x: number): number {
  f32[0] = x;
  const u = u32[0]!;
  if ((u & 0x7fffffff) > 0x7f800000) return (u >>> 16) | 0x40;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

export function bf16Value(bits: number): number {
  u32[0] = bits << 16;
  return f32[0]!;
}

export function makeArray(dtype: DT, values: number[], shared = true): Arr {
  const bytes = values.length * (dtype === "float64" ? 8 : dtype === "bfloat16" ? 2 : 4);
  const buf = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  switch (dtype) {
    case "float32":
      return fill(new Float32Array(buf), values);
    case "float64":
      return fill(new Float64Array(buf), values);
    case "int32":
      return fill(new Int32Array(buf), values);
    case "bfloat16":
      return fill(new Uint16Array(buf), values.map(bf16Bits));
  }
}

function fill<T extends Arr>(a: T, values: number[]): T {
  for (let i = 0; i < values.length; i++) a[i] = values[i]!;
  return a;
}

export function read(dtype: DT, a: Arr): number[] {
  return dtype === "bfloat16" ? Array.from(a, (b) => bf16Value(b)) : Array.from(a);
}

/** The reduction of one element over ranks, rounded as the dtype stores it. */
export function combine(dtype: DT, op: Op, xs: number[]): number {
  const p = xs.length;
  const sum = xs.reduce((a, b) => a + b, 0);
  let r: number;
  switch (op) {
    case "sum":
      r = sum;
      break;
    case "avg":
      r = dtype === "int32" ? Math.trunc(sum / p) : dtype === "float64" ? sum / p : Math.fround(sum / p);
      break;
    case "product":
      r = xs.reduce((a, b) => a * b, 1);
      break;
    case "min":
      r = Math.min(...xs);
      break;
    case "max":
      r = Math.max(...xs);
      break;
  }
  return dtype === "bfloat16" ? bf16Value(bf16Bits(r)) : dtype === "float32" ? Math.fround(r) : r;
}

export function firstDifference(got: number[], want: number[]): string | null {
  if (got.length !== want.length) return `length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) return `element ${i} is ${got[i]}, expected ${want[i]}`;
  return null;
}

/** Deterministic pseudo-random floats in [-1, 1) for a rank. */
export function randomFloats(seed: number, n: number): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

export function hashBytes(a: ArrayBufferView): string {
  const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 16777619) >>> 0;
  return h.toString(16);
}
