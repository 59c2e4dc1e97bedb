// Fused cross-entropy over the rows of a logits block, the softmax never stored: the forward writes
// each row's loss and the two numbers its backward needs (the row max and log Σ exp(x - max)), and
// the backward writes the logits' gradient in one pass. For a language model's [tokens, vocab]
// logits this replaces log_softmax + gather + their backwards, which made three more [tokens, vocab]
// buffers. Included inside each ISA namespace after norm.inl (row_max, exp_any).

// For row r with target t (ignored when t == ignore or outside [0, cols)):
//   logp_j  = (x_j - max) - ls,  ls = log Σ_j exp(x_j - max)
//   loss[r] = (1 - eps)·(-logp_t) + (eps / cols)·(-Σ_j logp_j), and 0 for an ignored row.
// stats[2r] = max, stats[2r + 1] = ls.
template <class S>
static void cross_entropy(const typename S::T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore,
                          typename S::T smoothing, typename S::T* loss, typename S::T* stats) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * cols;
    const T m = row_max<S>(xr, cols);
    const V vm = S::set1(m);
    // Two partial sums each, so that the adds of consecutive vectors do not wait on each other.
    V e0 = S::zero(), e1 = S::zero(), s0 = S::zero(), s1 = S::zero();
    int64_t i = 0;
    for (; i + 2 * W <= cols; i += 2 * W) {
      const V a = S::sub(S::load(xr + i), vm), b = S::sub(S::load(xr + i + W), vm);
      e0 = S::add(e0, exp_any<S>(a));
      e1 = S::add(e1, exp_any<S>(b));
      s0 = S::add(s0, a);
      s1 = S::add(s1, b);
    }
    double sum = S::hsum(S::add(e0, e1)), shifted = S::hsum(S::add(s0, s1));
    for (; i < cols; i++) {
      sum += std::exp(xr[i] - m);
      shifted += xr[i] - m;
    }
    const T ls = T(std::log(sum));
    stats[2 * r] = m;
    stats[2 * r + 1] = ls;
    const int32_t t = target[r];
    if (t == ignore || t < 0 || t >= cols) {
      loss[r] = T(0);
      continue;
    }
    const double nll = double(ls) - double(xr[t] - m);
    const double smooth = double(cols) * double(ls) - shifted;
    loss[r] = smoothing == T(0) ? T(nll) : T((1.0 - double(smoothing)) * nll + double(smoothing) / double(cols) * smooth);
  }
}

// out[r, j] = scale[r]·(exp(logp_j) - eps / cols - (1 - eps)·[j == t]) from the forward's stats;
// an ignored row has no target term (its scale is 0 from the caller).
template <class S>
static void cross_entropy_backward(const typename S::T* x, int64_t rows, int64_t cols, const int32_t* target,
                                   int32_t ignore, typename S::T smoothing, const typename S::T* stats,
                                   const typename S::T* scale, typename S::T* out) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const T uniform = smoothing / T(cols);
  for (int64_t r = 0; r < rows; r++) {
    const T* xr = x + r * cols;
    T* o = out + r * cols;
    const T m = stats[2 * r], ls = stats[2 * r + 1], g = scale[r];
    const V vm = S::set1(m), vls = S::set1(ls), vg = S::set1(g), vu = S::set1(uniform);
    int64_t i = 0;
    for (; i + W <= cols; i += W) {
      const V p = exp_any<S>(S::sub(S::sub(S::load(xr + i), vm), vls));
      S::store(o + i, S::mul(vg, S::sub(p, vu)));
    }
    for (; i < cols; i++) o[i] = g * (T(std::exp((xr[i] - m) - ls)) - uniform);
    const int32_t t = target[r];
    if (t != ignore && t >= 0 && t < cols) o[t] -= g * (T(1) - smoothing);
  }
}
