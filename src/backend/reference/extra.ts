import type { MathOp, ScatterOp, TypedArray } from "../backend.js";

// The kernels added with the everyday ops (trigonometry, sort, running sums, scatter with a
// reduction), written for obviousness: JS's Math is the oracle the native versions must match.

const MATH: Record<MathOp, (x: number) => number> = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sinh: Math.sinh,
  cosh: Math.cosh,
  asinh: Math.asinh,
  acosh: Math.acosh,
  atanh: Math.atanh,
  log1p: Math.log1p,
  expm1: Math.expm1,
};

export function unaryMath(op: MathOp, x: TypedArray, xOffset: number, out: TypedArray, n: number): void {
  const f = MATH[op];
  if (!f) throw new RangeError(`reference backend unaryMath: unknown op ${String(op)}`);
  // float32 inputs are computed in float64 and rounded once on store.
  for (let i = 0; i < n; i++) out[i] = f(x[xOffset + i]);
}

export function atan2(a: TypedArray, aOffset: number, b: TypedArray, bOffset: number, out: TypedArray, n: number): void {
  for (let i = 0; i < n; i++) out[i] = Math.atan2(a[aOffset + i], b[bOffset + i]);
}

/** NaN above every number; stable via Array.prototype.sort (stable since ES2019). */
function lessThan(u: number, v: number): boolean {
  return !Number.isNaN(u) && (Number.isNaN(v) || u < v);
}

export function sort(x: TypedArray, xOffset: number, outer: number, size: number, inner: number, descending: boolean, values: TypedArray, indices: Int32Array): void {
  const order = Array.from({ length: size }, (_, j) => j);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j: number) => xOffset + (o * size + j) * inner + i;
      for (let j = 0; j < size; j++) order[j] = j;
      order.sort((p, q) => {
        const u = x[at(p)];
        const v = x[at(q)];
        const [a, b] = descending ? [v, u] : [u, v];
        return lessThan(a, b) ? -1 : lessThan(b, a) ? 1 : 0;
      });
      for (let j = 0; j < size; j++) {
        const dst = (o * size + j) * inner + i;
        values[dst] = x[at(order[j])];
        indices[dst] = order[j];
      }
    }
  }
}

export function cumulative(prod: boolean, x: TypedArray, xOffset: number, outer: number, size: number, inner: number, out: TypedArray): void {
  const ints = out instanceof Int32Array;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let acc = prod ? 1 : 0;
      for (let j = 0; j < size; j++) {
        const at = (o * size + j) * inner + i;
        const v = x[xOffset + at];
        // Math.imul and |0 wrap int32 exactly as the native kernel's two's complement does.
        acc = ints ? (prod ? Math.imul(acc, v) : (acc + v) | 0) : prod ? acc * v : acc + v;
        out[at] = acc;
      }
    }
  }
}

export function scatterReduce(op: ScatterOp, src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void {
  const ints = out instanceof Int32Array;
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < inner; i++) {
        const at = (o * k + j) * inner + i;
        const dst = (o * size + index[at]) * inner + i;
        const s = src[at];
        const d = out[dst];
        if (op === "assign") out[dst] = s;
        else if (op === "sum") out[dst] = ints ? (d + s) | 0 : d + s;
        else if (op === "prod") out[dst] = ints ? Math.imul(d, s) : d * s;
        else if (op === "amax") out[dst] = Number.isNaN(s) || s > d ? s : d;
        else if (op === "amin") out[dst] = Number.isNaN(s) || s < d ? s : d;
        else throw new RangeError(`reference backend scatterReduce: unknown op ${String(op)}`);
      }
    }
  }
}
