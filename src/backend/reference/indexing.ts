import type { TypedArray } from "../backend.js";

export function indexSelect(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void {
  const k = index.length;
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < inner; i++) out[(o * k + j) * inner + i] = x[(o * size + index[j]) * inner + i];
    }
  }
}

export function indexAdd(grad: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void {
  const k = index.length;
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < inner; i++) out[(o * size + index[j]) * inner + i] += grad[(o * k + j) * inner + i];
    }
  }
}

export function gather(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void {
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < inner; i++) {
        const at = (o * k + j) * inner + i;
        out[at] = x[(o * size + index[at]) * inner + i];
      }
    }
  }
}

export function scatterAdd(src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void {
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < inner; i++) {
        const at = (o * k + j) * inner + i;
        out[(o * size + index[at]) * inner + i] += src[at];
      }
    }
  }
}

/** tril keeps column − row ≤ diagonal; triu keeps column − row ≥ diagonal. */
export function triangle(x: TypedArray, batch: number, rows: number, cols: number, diagonal: number, upper: boolean, out: TypedArray): void {
  for (let p = 0; p < batch; p++) {
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const at = (p * rows + r) * cols + c;
        const keep = upper ? c - r >= diagonal : c - r <= diagonal;
        out[at] = keep ? x[at] : 0;
      }
    }
  }
}
