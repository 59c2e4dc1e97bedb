import type { TypedArray } from "./dtype.js";
import type { NestedArray } from "./tensor.js";

/** Nested arrays from a contiguous run of values in row-major order. */
export function nest(values: ArrayLike<number>, shape: readonly number[]): NestedArray {
  if (shape.length === 0) return values[0];
  const build = (dim: number, offset: number): NestedArray[] => {
    const out: NestedArray[] = [];
    const inner = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
    for (let i = 0; i < shape[dim]; i++) {
      out.push(dim === shape.length - 1 ? values[offset + i] : build(dim + 1, offset + i * inner));
    }
    return out;
  };
  return build(0, 0);
}

const MAX_SHOWN = 1000;
const EDGE = 3;

function formatNumber(v: number, integral: boolean): string {
  if (integral) return String(v);
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const a = Math.abs(v);
  return a !== 0 && (a >= 1e5 || a < 1e-4) ? v.toExponential(4) : v.toFixed(4);
}

/** PyTorch-like text: nested brackets, aligned columns, "..." past 1000 elements. */
export function formatValues(values: TypedArray | Float64Array, shape: readonly number[], integral: boolean): string {
  const numel = values.length;
  const summarize = numel > MAX_SHOWN;
  const strs = Array.from(values, (v) => formatNumber(v, integral));
  const width = strs.reduce((w, s) => Math.max(w, s.length), 0);
  const pad = (s: string) => s.padStart(width);
  if (shape.length === 0) return strs[0];
  const rec = (dim: number, offset: number, indent: number): string => {
    const inner = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
    const n = shape[dim];
    const idx = summarize && n > 2 * EDGE ? [...Array(EDGE).keys(), -1, ...Array.from({ length: EDGE }, (_, i) => n - EDGE + i)] : [...Array(n).keys()];
    if (dim === shape.length - 1) return "[" + idx.map((i) => (i < 0 ? "..." : pad(strs[offset + i]))).join(", ") + "]";
    const sep = ",\n" + "\n".repeat(Math.max(0, shape.length - dim - 2)) + " ".repeat(indent + 1);
    return "[" + idx.map((i) => (i < 0 ? "..." : rec(dim + 1, offset + i * inner, indent + 1))).join(sep) + "]";
  };
  return rec(0, 0, "tensor(".length);
}
