import type { TypedArray } from "../backend.js";

function ignored(t: number, ignoreIndex: number, cols: number): boolean {
  return t === ignoreIndex || t < 0 || t >= cols;
}

export function crossEntropy(
  x: TypedArray,
  xOffset: number,
  rows: number,
  cols: number,
  target: Int32Array,
  targetOffset: number,
  ignoreIndex: number,
  smoothing: number,
  loss: TypedArray,
  stats: TypedArray,
): void {
  for (let r = 0; r < rows; r++) {
    const base = xOffset + r * cols;
    let max = -Infinity;
    for (let c = 0; c < cols; c++) max = Math.max(max, x[base + c]);
    let sum = 0;
    let shifted = 0;
    for (let c = 0; c < cols; c++) {
      sum += Math.exp(x[base + c] - max);
      shifted += x[base + c] - max;
    }
    const ls = Math.log(sum);
    stats[2 * r] = max;
    stats[2 * r + 1] = ls;
    const t = target[targetOffset + r];
    if (ignored(t, ignoreIndex, cols)) {
      loss[r] = 0;
      continue;
    }
    const nll = ls - (x[base + t] - max);
    loss[r] = (1 - smoothing) * nll + (smoothing / cols) * (cols * ls - shifted);
  }
}

export function crossEntropyBackward(
  x: TypedArray,
  xOffset: number,
  rows: number,
  cols: number,
  target: Int32Array,
  targetOffset: number,
  ignoreIndex: number,
  smoothing: number,
  stats: TypedArray,
  scale: TypedArray,
  out: TypedArray,
): void {
  for (let r = 0; r < rows; r++) {
    const base = xOffset + r * cols;
    const max = stats[2 * r];
    const ls = stats[2 * r + 1];
    const g = scale[r];
    const t = target[targetOffset + r];
    for (let c = 0; c < cols; c++) {
      const hit = c === t && !ignored(t, ignoreIndex, cols) ? 1 - smoothing : 0;
      out[r * cols + c] = g * (Math.exp(x[base + c] - max - ls) - smoothing / cols - hit);
    }
  }
}
