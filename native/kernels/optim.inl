// Fused optimizer updates, included inside each ISA namespace. The arithmetic follows PyTorch 1.13's
// single-tensor Adam/AdamW and SGD step for step, so results agree to rounding.

template <class S>
static void adam(const AdamParams& p, typename S::T* param, const typename S::T* grad, typename S::T* m,
                 typename S::T* v, typename S::T* max_v, int64_t n) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const T b1 = T(p.beta1), b2 = T(p.beta2), c1 = T(1 - p.beta1), c2 = T(1 - p.beta2);
  const T wd = T(p.weight_decay), decay = T(1 - p.lr * p.weight_decay);
  const T neg_step = T(-p.step_size), bc2 = T(p.bias2_sqrt), eps = T(p.eps);
  const bool coupled_wd = !p.decoupled && p.weight_decay != 0, decoupled_wd = p.decoupled && p.weight_decay != 0;
  const V vb1 = S::set1(b1), vb2 = S::set1(b2), vc1 = S::set1(c1), vc2 = S::set1(c2), vwd = S::set1(wd);
  const V vdecay = S::set1(decay), vstep = S::set1(neg_step), vbc2 = S::set1(bc2), veps = S::set1(eps);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V g = S::load(grad + i);
    if (p.maximize) g = S::neg(g);
    V x = S::load(param + i);
    if (coupled_wd) g = S::fmadd(vwd, x, g);
    if (decoupled_wd) x = S::mul(x, vdecay);
    const V mi = S::add(S::mul(S::load(m + i), vb1), S::mul(g, vc1));
    const V vi = S::add(S::mul(S::load(v + i), vb2), S::mul(S::mul(g, g), vc2));
    S::store(m + i, mi);
    S::store(v + i, vi);
    V second = vi;
    if (max_v) {
      second = S::max_raw(S::load(max_v + i), vi);
      S::store(max_v + i, second);
    }
    const V denom = S::add(S::div(S::sqrt(second), vbc2), veps);
    S::store(param + i, S::fmadd(vstep, S::div(mi, denom), x));
  }
  for (; i < n; i++) {
    T g = p.maximize ? -grad[i] : grad[i];
    T x = param[i];
    if (coupled_wd) g += wd * x;
    if (decoupled_wd) x *= decay;
    const T mi = m[i] * b1 + g * c1;
    const T vi = v[i] * b2 + g * g * c2;
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (max_v) second = max_v[i] = std::max(max_v[i], vi);
    param[i] = x + neg_step * (mi / (std::sqrt(second) / bc2 + eps));
  }
}

template <class S>
static void sgd(const SgdParams& p, typename S::T* param, const typename S::T* grad, typename S::T* buf, int64_t n) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const T wd = T(p.weight_decay), mom = T(p.momentum), damp = T(1 - p.dampening);
  const T alpha = T(-p.lr);
  const V vwd = S::set1(wd), vmom = S::set1(mom), vdamp = S::set1(damp), valpha = S::set1(alpha);
  const bool has_wd = p.weight_decay != 0, has_buf = p.has_buffer && buf;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V d = S::load(grad + i);
    if (p.maximize) d = S::neg(d);
    const V x = S::load(param + i);
    if (has_wd) d = S::fmadd(vwd, x, d);
    if (has_buf) {
      const V b = p.first_step ? d : S::add(S::mul(S::load(buf + i), vmom), S::mul(d, vdamp));
      S::store(buf + i, b);
      d = p.nesterov ? S::fmadd(vmom, b, d) : b;
    }
    S::store(param + i, S::fmadd(valpha, d, x));
  }
  for (; i < n; i++) {
    T d = p.maximize ? -grad[i] : grad[i];
    if (has_wd) d += wd * param[i];
    if (has_buf) {
      const T b = p.first_step ? d : buf[i] * mom + d * damp;
      buf[i] = b;
      d = p.nesterov ? d + mom * b : b;
    }
    param[i] += alpha * d;
  }
}
