// Row-wise softmax / log_softmax and layer norm, forward and backward. Included inside each ISA
// namespace after reduce.inl.

template <class S>
static inline typename S::V exp_any(typename S::V v) {
  if constexpr (std::is_same_v<typename S::T, float>) {
    return vexp(v);
  } else {
    alignas(64) double b[S::W];
    S::store(b, v);
    for (int i = 0; i < S::W; i++) b[i] = std::exp(b[i]);
    return S::load(b);
  }
}

template <class S>
static inline typename S::T row_max(const typename S::T* x, int64_t n) {
  using T = typename S::T;
  constexpr int W = S::W;
  T m = x[0];
  int64_t i = 0;
  if (n >= W) {
    typename S::V vm = S::load(x);
    for (i = W; i + W <= n; i += W) vm = S::max_raw(vm, S::load(x + i));
    alignas(64) T b[W];
    S::store(b, vm);
    for (int j = 0; j < W; j++) m = b[j] > m ? b[j] : m;
  }
  for (; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

template <class S>
static void softmax(const typename S::T* x, typename S::T* out, int64_t rows, int64_t cols, bool log) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  if (cols == 0) return;
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * cols;
    T* yr = out + r * cols;
    const T m = row_max<S>(xr, cols);
    const V vm = S::set1(m);
    V acc = S::zero();
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      const V e = exp_any<S>(S::sub(S::load(xr + i), vm));
      acc = S::add(acc, e);
      if (!log) S::store(yr + i, e);
    }
    double sum = S::hsum(acc);
    for (; i < cols; i++) {
      const T e = std::exp(xr[i] - m);
      sum += e;
      if (!log) yr[i] = e;
    }
    if (log) {
      // (x - max) - log(sum), not x - (max + log(sum)): the latter rounds max + log(sum) at the
      // magnitude of max and loses the small part for large logits.
      const T ls = T(std::log(sum));
      const V vls = S::set1(ls);
      for (i = 0; i + W <= cols; i += W) S::store(yr + i, S::sub(S::sub(S::load(xr + i), vm), vls));
      for (; i < cols; i++) yr[i] = (xr[i] - m) - ls;
    } else {
      const V inv = S::set1(T(1.0 / sum));
      for (i = 0; i + W <= cols; i += W) S::store(yr + i, S::mul(S::load(yr + i), inv));
      const T s = T(1.0 / sum);
      for (; i < cols; i++) yr[i] *= s;
    }
  }
}

template <class S>
static void softmax_backward(const typename S::T* g, const typename S::T* y, typename S::T* out, int64_t rows,
                             int64_t cols, bool log) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  for (int64_t r = 0; r < rows; r++) {
    const T* gr = g + r * cols;
    const T* yr = y + r * cols;
    T* o = out + r * cols;
    V acc = S::zero();
    int64_t i = 0;
    if (log) {
      for (; i + W <= cols; i += W) acc = S::add(acc, S::load(gr + i));
    } else {
      for (; i + W <= cols; i += W) acc = S::fmadd(S::load(gr + i), S::load(yr + i), acc);
    }
    T total = S::hsum(acc);
    for (; i < cols; i++) total += log ? gr[i] : gr[i] * yr[i];
    const V vt = S::set1(total);
    i = 0;
    if (log) {
      // gradX = g - exp(y) * Σg
      for (; i + W <= cols; i += W) {
        const V e = exp_any<S>(S::load(yr + i));
        S::store(o + i, S::sub(S::load(gr + i), S::mul(e, vt)));
      }
      for (; i < cols; i++) o[i] = gr[i] - std::exp(yr[i]) * total;
    } else {
      // gradX = y * (g - Σ g*y)
      for (; i + W <= cols; i += W) S::store(o + i, S::mul(S::load(yr + i), S::sub(S::load(gr + i), vt)));
      for (; i < cols; i++) o[i] = yr[i] * (gr[i] - total);
    }
  }
}

template <class S>
static void layer_norm(const typename S::T* x, int64_t rows, int64_t cols, const typename S::T* w,
                       const typename S::T* b, typename S::T eps, typename S::T* out, typename S::T* mean,
                       typename S::T* rstd) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * cols;
    T* yr = out + r * cols;
    double mu = 0, var = 0;
    if (cols > 0) {
      // The mean again from the deviations about the first estimate (see Deviations).
      const Deviations d = deviations(xr, cols, sum_f64(xr, cols) / double(cols));
      const double shift = d.sum / double(cols);
      mu = d.centre + shift;
      var = std::max(0.0, d.sum_sq / double(cols) - shift * shift);
    }
    const T rs = T(1.0 / std::sqrt(var + double(eps)));
    mean[r] = T(mu);
    rstd[r] = rs;
    const V vmu = S::set1(T(mu)), vrs = S::set1(rs);
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      V v = S::mul(S::sub(S::load(xr + i), vmu), vrs);
      if (w) v = S::mul(v, S::load(w + i));
      if (b) v = S::add(v, S::load(b + i));
      S::store(yr + i, v);
    }
    for (; i < cols; i++) {
      T v = (xr[i] - T(mu)) * rs;
      if (w) v *= w[i];
      if (b) v += b[i];
      yr[i] = v;
    }
  }
}

template <class S>
static void layer_norm_backward_x(const typename S::T* g, const typename S::T* x, int64_t rows, int64_t cols,
                                  const typename S::T* w, const typename S::T* mean, const typename S::T* rstd,
                                  typename S::T* gx) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  for (int64_t r = 0; r < rows; r++) {
    const T* gr = g + r * cols;
    const T* xr = x + r * cols;
    T* o = gx + r * cols;
    const V vmu = S::set1(mean[r]), vrs = S::set1(rstd[r]);
    // a = mean(g*w), b = mean(g*w*xhat); gradX = rstd * (g*w - a - xhat*b).
    V sa = S::zero(), sb = S::zero();
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      V gw = S::load(gr + i);
      if (w) gw = S::mul(gw, S::load(w + i));
      const V xh = S::mul(S::sub(S::load(xr + i), vmu), vrs);
      sa = S::add(sa, gw);
      sb = S::fmadd(gw, xh, sb);
    }
    double suma = S::hsum(sa), sumb = S::hsum(sb);
    for (; i < cols; i++) {
      const T gw = w ? gr[i] * w[i] : gr[i];
      suma += gw;
      sumb += gw * (xr[i] - mean[r]) * rstd[r];
    }
    const T a = T(suma / double(cols)), bb = T(sumb / double(cols));
    const V va = S::set1(a), vb = S::set1(bb);
    for (i = 0; i + W <= cols; i += W) {
      V gw = S::load(gr + i);
      if (w) gw = S::mul(gw, S::load(w + i));
      const V xh = S::mul(S::sub(S::load(xr + i), vmu), vrs);
      S::store(o + i, S::mul(vrs, S::sub(S::sub(gw, va), S::mul(xh, vb))));
    }
    for (; i < cols; i++) {
      const T gw = w ? gr[i] * w[i] : gr[i];
      const T xh = (xr[i] - mean[r]) * rstd[r];
      o[i] = rstd[r] * (gw - a - xh * bb);
    }
  }
}

template <class S>
static void layer_norm_backward_w(const typename S::T* g, const typename S::T* x, int64_t rows, int64_t cols,
                                  int64_t c0, int64_t c1, const typename S::T* mean, const typename S::T* rstd,
                                  typename S::T* gw, typename S::T* gb) {
  using T = typename S::T;
  constexpr int64_t kTile = 256;
  for (int64_t j0 = c0; j0 < c1; j0 += kTile) {
    const int64_t len = std::min(kTile, c1 - j0);
    double aw[kTile], ab[kTile];
    for (int64_t j = 0; j < len; j++) aw[j] = ab[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
      const T* gr = g + r * cols + j0;
      const T* xr = x + r * cols + j0;
      const double mu = mean[r], rs = rstd[r];
      for (int64_t j = 0; j < len; j++) {
        aw[j] += double(gr[j]) * ((double(xr[j]) - mu) * rs);
        ab[j] += double(gr[j]);
      }
    }
    if (gw)
      for (int64_t j = 0; j < len; j++) gw[j0 + j] = T(aw[j]);
    if (gb)
      for (int64_t j = 0; j < len; j++) gb[j0 + j] = T(ab[j]);
  }
}
