import type { TypedArray } from "../backend.js";

export function softmax(x: TypedArray, xOffset: number, rows: number, cols: number, log: boolean, out: TypedArray): void {
  for (let r = 0; r < rows; r++) {
    const base = xOffset + r * cols;
    let max = -Infinity;
    for (let c = 0; c < cols; c++) max = Math.max(max, x[base + c]);
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += Math.exp(x[base + c] - max);
    const logSum = Math.log(sum);
    for (let c = 0; c < cols; c++) {
      const shifted = x[base + c] - max;
      out[r * cols + c] = log ? shifted - logSum : Math.exp(shifted) / sum;
    }
  }
}

export function softmaxBackward(grad: TypedArray, y: TypedArray, rows: number, cols: number, log: boolean, out: TypedArray): void {
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let dot = 0;
    for (let c = 0; c < cols; c++) dot += log ? grad[base + c] : grad[base + c] * y[base + c];
    for (let c = 0; c < cols; c++) {
      const g = grad[base + c];
      out[base + c] = log ? g - Math.exp(y[base + c]) * dot : y[base + c] * (g - dot);
    }
  }
}
