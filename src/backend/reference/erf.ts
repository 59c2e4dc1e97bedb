const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

/**
 * The error function to about 1 ulp, from two textbook expansions (JavaScript has no Math.erf):
 * for |x| < 3 the series erf(x) = 2/√π · e^(−x²) · Σ (2x²)ⁿ x / (1·3·…·(2n+1)), whose terms are
 * all positive so nothing cancels; beyond, erf = 1 − erfc with erfc from its continued fraction.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const ax = Math.abs(x);
  if (ax >= 3) return Math.sign(x) * (1 - erfcLarge(ax));
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
    if (Math.abs(term) <= Math.abs(sum) * 1e-17) break;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/**
 * erfc(x) for x ≥ 3 from e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated from the
 * tail; 80 levels are far more than double precision needs at x = 3.
 */
function erfcLarge(x: number): number {
  if (x > 27) return 0;
  let k = x;
  for (let n = 80; n >= 1; n--) k = x + n / 2 / k;
  return Math.exp(-x * x) / (Math.sqrt(Math.PI) * k);
}
