import type { Generator } from "../tensor/random.js";

/** A uniformly random permutation of 0..n-1 (Fisher–Yates) drawn from `generator`. */
export function randperm(n: number, generator: Generator): Int32Array {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`randperm: n must be a non-negative integer, got ${n}`);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = generator.randint(0, i + 1);
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}
