import type { AvgPoolWindows, ConvGeometry, MaxPoolGeometry, TypedArray } from "../backend.js";

/**
 * Convolution, pooling and batch norm's per-channel kernels as direct loops from their definitions:
 * out[n, o, i, j] = b[o] + Σ_{c in o's group, p, q} x[n, c, i·s − pad + p·d, j·s − pad + q·d] · w[o, c, p, q].
 * Each visits the same (output, input, weight) triples; only what accumulates where differs.
 */
function eachTap(g: ConvGeometry, visit: (xi: number, wi: number, oi: number) => void): void {
  const cpg = g.inChannels / g.groups;
  const ocpg = g.outChannels / g.groups;
  for (let n = 0; n < g.batch; n++)
    for (let o = 0; o < g.outChannels; o++) {
      const group = Math.floor(o / ocpg);
      for (let i = 0; i < g.outHeight; i++)
        for (let j = 0; j < g.outWidth; j++) {
          const oi = ((n * g.outChannels + o) * g.outHeight + i) * g.outWidth + j;
          for (let c = 0; c < cpg; c++)
            for (let p = 0; p < g.kernelH; p++) {
              const h = i * g.strideH - g.padH + p * g.dilationH;
              if (h < 0 || h >= g.height) continue;
              for (let q = 0; q < g.kernelW; q++) {
                const w = j * g.strideW - g.padW + q * g.dilationW;
                if (w < 0 || w >= g.width) continue;
                const xi = ((n * g.inChannels + group * cpg + c) * g.height + h) * g.width + w;
                visit(xi, ((o * cpg + c) * g.kernelH + p) * g.kernelW + q, oi);
              }
            }
        }
    }
}

/** Sums in float64 and rounds once into `out` (a float32 output rounds like the other kernels). */
function store(acc: Float64Array, out: TypedArray): void {
  for (let i = 0; i < acc.length; i++) out[i] = acc[i];
}

export function conv2d(g: ConvGeometry, x: TypedArray, weight: TypedArray, bias: TypedArray | null, out: TypedArray): void {
  const acc = new Float64Array(g.batch * g.outChannels * g.outHeight * g.outWidth);
  const plane = g.outHeight * g.outWidth;
  if (bias) for (let i = 0; i < acc.length; i++) acc[i] = bias[Math.floor(i / plane) % g.outChannels];
  eachTap(g, (xi, wi, oi) => (acc[oi] += x[xi] * weight[wi]));
  store(acc, out);
}

export function conv2dBackwardInput(g: ConvGeometry, grad: TypedArray, weight: TypedArray, gradX: TypedArray): void {
  const acc = new Float64Array(g.batch * g.inChannels * g.height * g.width);
  eachTap(g, (xi, wi, oi) => (acc[xi] += grad[oi] * weight[wi]));
  store(acc, gradX);
}

export function conv2dBackwardWeight(g: ConvGeometry, grad: TypedArray, x: TypedArray, gradWeight: TypedArray | null, gradBias: TypedArray | null): void {
  if (gradWeight) {
    const acc = new Float64Array(gradWeight.length);
    eachTap(g, (xi, wi, oi) => (acc[wi] += grad[oi] * x[xi]));
    store(acc, gradWeight);
  }
  if (gradBias) {
    const plane = g.outHeight * g.outWidth;
    const acc = new Float64Array(g.outChannels);
    for (let i = 0; i < g.batch * g.outChannels * plane; i++) acc[Math.floor(i / plane) % g.outChannels] += grad[i];
    store(acc, gradBias);
  }
}

export function maxPool2d(g: MaxPoolGeometry, x: TypedArray, out: TypedArray, indices: Int32Array): void {
  const plane = g.height * g.width;
  let k = 0;
  for (let p = 0; p < g.planes; p++)
    for (let i = 0; i < g.outHeight; i++)
      for (let j = 0; j < g.outWidth; j++, k++) {
        let best = -1;
        let value = -Infinity;
        for (let a = 0; a < g.kernelH; a++) {
          const h = i * g.strideH - g.padH + a * g.dilationH;
          if (h < 0 || h >= g.height) continue;
          for (let b = 0; b < g.kernelW; b++) {
            const w = j * g.strideW - g.padW + b * g.dilationW;
            if (w < 0 || w >= g.width) continue;
            const v = x[p * plane + h * g.width + w];
            if (best < 0 || v > value || Number.isNaN(v)) [best, value] = [h * g.width + w, v];
          }
        }
        out[k] = value;
        indices[k] = best;
      }
}

function eachWindow(w: AvgPoolWindows, visit: (outIndex: number, inIndex: number, divisor: number) => void): void {
  const plane = w.height * w.width;
  let k = 0;
  for (let p = 0; p < w.planes; p++)
    for (let i = 0; i < w.outHeight; i++)
      for (let j = 0; j < w.outWidth; j++, k++)
        for (let a = w.hStart[i]; a < w.hEnd[i]; a++)
          for (let b = w.wStart[j]; b < w.wEnd[j]; b++) visit(k, p * plane + a * w.width + b, w.divisors[i * w.outWidth + j]);
}

export function avgPool2d(w: AvgPoolWindows, x: TypedArray, out: TypedArray): void {
  const acc = new Float64Array(w.planes * w.outHeight * w.outWidth);
  eachWindow(w, (o, i, d) => (acc[o] += x[i] / d));
  store(acc, out);
}

export function avgPool2dBackward(w: AvgPoolWindows, grad: TypedArray, gradX: TypedArray): void {
  const acc = new Float64Array(w.planes * w.height * w.width);
  eachWindow(w, (o, i, d) => (acc[i] += grad[o] / d));
  store(acc, gradX);
}

export function channelSums(a: TypedArray, b: TypedArray | null, n: number, c: number, l: number, sumA: Float64Array, sumAB: Float64Array): void {
  sumA.fill(0, 0, c);
  sumAB.fill(0, 0, c);
  for (let i = 0; i < n * c * l; i++) {
    const ch = Math.floor(i / l) % c;
    sumA[ch] += a[i];
    sumAB[ch] += a[i] * (b ? b[i] : a[i]);
  }
}

export function channelAffine(a: TypedArray, b: TypedArray | null, n: number, c: number, l: number, sa: Float64Array, sb: Float64Array | null, shift: Float64Array, out: TypedArray): void {
  for (let i = 0; i < n * c * l; i++) {
    const ch = Math.floor(i / l) % c;
    out[i] = a[i] * sa[ch] + (b && sb ? b[i] * sb[ch] : 0) + shift[ch];
  }
}
