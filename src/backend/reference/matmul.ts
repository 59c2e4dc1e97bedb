import type { MatmulArgs } from "../backend.js";

export function matmul(args: MatmulArgs): void {
  const { batch, m, n, k, a, b, out, alpha, beta } = args;
  for (let p = 0; p < batch; p++) {
    const aBase = args.aOffset + p * args.aBatchStride;
    const bBase = args.bOffset + p * args.bBatchStride;
    const outBase = args.outOffset + p * m * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let q = 0; q < k; q++) {
          acc += a[aBase + i * args.aRowStride + q * args.aColStride] * b[bBase + q * args.bRowStride + j * args.bColStride];
        }
        const dst = outBase + i * n + j;
        // beta = 0 must ignore the old contents entirely: 0 * NaN would otherwise leak NaN.
        out[dst] = beta === 0 ? alpha * acc : alpha * acc + beta * out[dst];
      }
    }
  }
}
