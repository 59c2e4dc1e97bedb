// Vectorised float32 transcendentals, included inside each ISA namespace after its simd_*.h.
// float64 has no vector versions here: its kernels call libm per lane, which is exact.
// Accuracy (checked against libm by test/backend/cpu_unary.test.ts): exp, log, tanh about 1 ulp;
// erfc about 2e-7 relative everywhere (Numerical Recipes' erfcc, which stays relative in the tail
// where 1 - erf would cancel).

using VF = F32::V;

static inline VF vexp(VF x) {
  using S = F32;
  // Cephes expf: x = n ln2 + r with ln2 split in two so n*ln2 is exact, then a degree-6 polynomial.
  const VF xc = S::min_raw(S::max_raw(x, S::set1(-104.0f)), S::set1(88.75f));
  const VF n = S::round(S::mul(xc, S::set1(1.44269504088896341f)));
  VF r = S::fmadd(n, S::set1(-0.693359375f), xc);
  r = S::fmadd(n, S::set1(2.12194440e-4f), r);
  VF p = S::set1(1.9875691500e-4f);
  p = S::fmadd(p, r, S::set1(1.3981999507e-3f));
  p = S::fmadd(p, r, S::set1(8.3334519073e-3f));
  p = S::fmadd(p, r, S::set1(4.1665795894e-2f));
  p = S::fmadd(p, r, S::set1(1.6666665459e-1f));
  p = S::fmadd(p, r, S::set1(5.0000001201e-1f));
  p = S::fmadd(p, S::mul(r, r), S::add(r, S::set1(1.0f)));
  // 2^n as two factors so that n in [-150, 128] (denormal results, and up to FLT_MAX) stays exact.
  const VF n1 = S::round(S::mul(n, S::set1(0.5f)));
  const VF n2 = S::sub(n, n1);
  VF res = S::mul(S::mul(p, S::pow2i(n1)), S::pow2i(n2));
  res = S::select(S::gt(x, S::set1(88.72283935546875f)), S::set1(__builtin_inff()), res);
  res = S::select(S::lt(x, S::set1(-103.97f)), S::zero(), res);
  return S::select(S::isnan(x), x, res);
}

static inline VF vlog(VF x) {
  using S = F32;
  // Cephes logf on the mantissa in [sqrt(1/2), sqrt(2)).
  const S::M denormal = S::lt(x, S::set1(1.17549435e-38f));
  const VF xs = S::select(denormal, S::mul(x, S::set1(8388608.0f)), x);
  VF e;
  VF m = S::frexp(xs, &e);
  e = S::select(denormal, S::sub(e, S::set1(23.0f)), e);
  const S::M small = S::lt(m, S::set1(0.707106781186547524f));
  e = S::select(small, S::sub(e, S::set1(1.0f)), e);
  m = S::select(small, S::add(m, m), m);
  const VF f = S::sub(m, S::set1(1.0f));
  const VF z = S::mul(f, f);
  VF y = S::set1(7.0376836292e-2f);
  y = S::fmadd(y, f, S::set1(-1.1514610310e-1f));
  y = S::fmadd(y, f, S::set1(1.1676998740e-1f));
  y = S::fmadd(y, f, S::set1(-1.2420140846e-1f));
  y = S::fmadd(y, f, S::set1(1.4249322787e-1f));
  y = S::fmadd(y, f, S::set1(-1.6668057665e-1f));
  y = S::fmadd(y, f, S::set1(2.0000714765e-1f));
  y = S::fmadd(y, f, S::set1(-2.4999993993e-1f));
  y = S::fmadd(y, f, S::set1(3.3333331174e-1f));
  y = S::mul(S::mul(y, f), z);
  y = S::fmadd(e, S::set1(-2.12194440e-4f), y);
  y = S::fmadd(z, S::set1(-0.5f), y);
  VF res = S::add(f, y);
  res = S::fmadd(e, S::set1(0.693359375f), res);
  res = S::select(S::lt(x, S::zero()), S::set1(__builtin_nanf("")), res);
  res = S::select(S::eq(x, S::zero()), S::set1(-__builtin_inff()), res);
  res = S::select(S::eq(x, S::set1(__builtin_inff())), x, res);
  return S::select(S::isnan(x), x, res);
}

static inline VF vtanh(VF x) {
  using S = F32;
  const VF ax = S::abs(x);
  // Small |x|: Cephes tanhf's odd polynomial (1 - 2/(e^2x + 1) would cancel there).
  const VF s = S::mul(x, x);
  VF p = S::set1(-5.70498872745e-3f);
  p = S::fmadd(p, s, S::set1(2.06390887954e-2f));
  p = S::fmadd(p, s, S::set1(-5.37397155531e-2f));
  p = S::fmadd(p, s, S::set1(1.33314422036e-1f));
  p = S::fmadd(p, s, S::set1(-3.33332819422e-1f));
  const VF small = S::fmadd(S::mul(p, s), x, x);
  const VF e = vexp(S::add(ax, ax));
  VF big = S::sub(S::set1(1.0f), S::div(S::set1(2.0f), S::add(e, S::set1(1.0f))));
  big = S::select(S::lt(x, S::zero()), S::neg(big), big);
  return S::select(S::lt(ax, S::set1(0.625f)), small, big);
}

static inline VF vsigmoid(VF x) {
  using S = F32;
  return S::div(S::set1(1.0f), S::add(S::set1(1.0f), vexp(S::neg(x))));
}

// erfc(z) for z >= 0.
static inline VF verfc_pos(VF z) {
  using S = F32;
  const VF t = S::div(S::set1(1.0f), S::fmadd(z, S::set1(0.5f), S::set1(1.0f)));
  VF p = S::set1(0.17087277f);
  p = S::fmadd(p, t, S::set1(-0.82215223f));
  p = S::fmadd(p, t, S::set1(1.48851587f));
  p = S::fmadd(p, t, S::set1(-1.13520398f));
  p = S::fmadd(p, t, S::set1(0.27886807f));
  p = S::fmadd(p, t, S::set1(-0.18628806f));
  p = S::fmadd(p, t, S::set1(0.09678418f));
  p = S::fmadd(p, t, S::set1(0.37409196f));
  p = S::fmadd(p, t, S::set1(1.00002368f));
  p = S::fmadd(p, t, S::set1(-1.26551223f));
  return S::mul(t, vexp(S::sub(p, S::mul(z, z))));
}

// 1 + erf(x / sqrt 2) = 2 Phi(x), accurate in both tails.
static inline VF vtwo_phi(VF x) {
  using S = F32;
  const VF z = S::mul(x, S::set1(0.70710678118654752f));
  const VF e = verfc_pos(S::abs(z));
  return S::select(S::ge(z, S::zero()), S::sub(S::set1(2.0f), e), e);
}
