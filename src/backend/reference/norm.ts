import type { TypedArray } from "../backend.js";

export function layerNorm(
  x: TypedArray,
  rows: number,
  cols: number,
  weight: TypedArray | null,
  bias: TypedArray | null,
  eps: number,
  out: TypedArray,
  mean: TypedArray,
  rstd: TypedArray,
): void {
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += x[base + c];
    const mu = sum / cols;
    // Two passes (mean, then squared deviations) rather than E[x²] − E[x]², which cancels badly.
    let sq = 0;
    for (let c = 0; c < cols; c++) sq += (x[base + c] - mu) ** 2;
    const inv = 1 / Math.sqrt(sq / cols + eps);
    mean[r] = mu;
    rstd[r] = inv;
    for (let c = 0; c < cols; c++) {
      const w = weight ? weight[c] : 1;
      const b = bias ? bias[c] : 0;
      out[base + c] = (x[base + c] - mu) * inv * w + b;
    }
  }
}

/**
 * With x̂ = (x − mean)·rstd and ĝ = grad·weight, the input gradient of each row is
 * rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ · x̂)).
 */
export function layerNormBackward(
  grad: TypedArray,
  x: TypedArray,
  rows: number,
  cols: number,
  weight: TypedArray | null,
  mean: TypedArray,
  rstd: TypedArray,
  gradX: TypedArray,
  gradWeight: TypedArray | null,
  gradBias: TypedArray | null,
): void {
  const gw = new Float64Array(cols);
  const gb = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const mu = mean[r];
    const inv = rstd[r];
    let meanG = 0;
    let meanGX = 0;
    for (let c = 0; c < cols; c++) {
      const xhat = (x[base + c] - mu) * inv;
      const g = grad[base + c] * (weight ? weight[c] : 1);
      meanG += g;
      meanGX += g * xhat;
      gw[c] += grad[base + c] * xhat;
      gb[c] += grad[base + c];
    }
    meanG /= cols;
    meanGX /= cols;
    for (let c = 0; c < cols; c++) {
      const xhat = (x[base + c] - mu) * inv;
      const g = grad[base + c] * (weight ? weight[c] : 1);
      gradX[base + c] = inv * (g - meanG - xhat * meanGX);
    }
  }
  if (gradWeight) for (let c = 0; c < cols; c++) gradWeight[c] = gw[c];
  if (gradBias) for (let c = 0; c < cols; c++) gradBias[c] = gb[c];
}
