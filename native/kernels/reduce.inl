// Reductions of the middle axis of [outer, size, inner], and the float64 row sums the norms use.
// Included inside each ISA namespace. float32 sums are accumulated in float64 so that a long axis
// keeps float32 accuracy.

// Σ x[i] in float64, vectorised. Eight accumulators: each add waits on the one before it in its
// chain (several cycles), so with two chains a sum that fits in L2 ran at a fraction of what its
// loads allow.
template <class T>
static inline F64::V load_as_f64(const T* p) {
  if constexpr (std::is_same_v<T, float>) return F64::load_f32(p);
  else return F64::load(p);
}

template <class T>
static inline double sum_f64(const T* x, int64_t n) {
  constexpr int W = F64::W;
  constexpr int K = 8;
  F64::V acc[K];
  for (int k = 0; k < K; k++) acc[k] = F64::zero();
  int64_t i = 0;
  for (; i + K * W <= n; i += K * W) {
    for (int k = 0; k < K; k++) acc[k] = F64::add(acc[k], load_as_f64(x + i + k * W));
  }
  for (; i + W <= n; i += W) acc[0] = F64::add(acc[0], load_as_f64(x + i));
  for (int k = 0; k < K / 2; k++) acc[k] = F64::add(acc[k], acc[k + K / 2]);
  double s = F64::hsum(F64::add(F64::add(acc[0], acc[2]), F64::add(acc[1], acc[3])));
  for (; i < n; i++) s += double(x[i]);
  return s;
}

// Σ (x[i] - c)² in float64.
template <class T>
static inline double sum_sq_dev_f64(const T* x, int64_t n, double c) {
  constexpr int W = F64::W;
  const F64::V vc = F64::set1(c);
  F64::V acc0 = F64::zero(), acc1 = F64::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    F64::V d0, d1;
    if constexpr (std::is_same_v<T, float>) {
      d0 = F64::sub(F64::load_f32(x + i), vc);
      d1 = F64::sub(F64::load_f32(x + i + W), vc);
    } else {
      d0 = F64::sub(F64::load(x + i), vc);
      d1 = F64::sub(F64::load(x + i + W), vc);
    }
    acc0 = F64::fmadd(d0, d0, acc0);
    acc1 = F64::fmadd(d1, d1, acc1);
  }
  double s = F64::hsum(F64::add(acc0, acc1));
  for (; i < n; i++) s += (double(x[i]) - c) * (double(x[i]) - c);
  return s;
}

template <class T>
static double sum_squares(const T* x, int64_t n) {
  return sum_sq_dev_f64(x, n, 0.0);
}

// First extreme of a row, NaN counting as the extreme (PyTorch's max/min).
template <class T, bool kMax>
static inline void extreme_row(const T* x, int64_t n, int64_t stride, T* value, int32_t* index) {
  T best = x[0];
  int64_t at = 0;
  for (int64_t i = 1; i < n && best == best; i++) {
    const T v = x[i * stride];
    if (v != v || (kMax ? v > best : v < best)) best = v, at = i;
  }
  *value = best;
  if (index) *index = int32_t(at);
}

template <class T, bool kMax>
static void extreme(const T* x, int64_t outer, int64_t size, int64_t inner, T* out, int32_t* indices) {
  for (int64_t o = 0; o < outer; o++) {
    const T* xo = x + o * size * inner;
    T* oo = out + o * inner;
    int32_t* io = indices ? indices + o * inner : nullptr;
    if (inner == 1) {
      extreme_row<T, kMax>(xo, size, 1, oo, io);
      continue;
    }
    // Row by row so that reads stay contiguous; `best == best` keeps the first NaN.
    for (int64_t i = 0; i < inner; i++) oo[i] = xo[i];
    if (io)
      for (int64_t i = 0; i < inner; i++) io[i] = 0;
    for (int64_t s = 1; s < size; s++) {
      const T* row = xo + s * inner;
      for (int64_t i = 0; i < inner; i++) {
        const T v = row[i], best = oo[i];
        if (best == best && (v != v || (kMax ? v > best : v < best))) {
          oo[i] = v;
          if (io) io[i] = int32_t(s);
        }
      }
    }
  }
}

template <class T>
static void reduce(int op, const T* x, int64_t outer, int64_t size, int64_t inner, T* out, int32_t* indices) {
  if (size == 0) {
    // Only sum and prod of an empty axis reach here (ops/ rejects max/min of nothing).
    const T v = op == kProd ? T(1) : op == kSum ? T(0) : T(NAN);
    for (int64_t i = 0; i < outer * inner; i++) out[i] = v;
    if (indices)
      for (int64_t i = 0; i < outer * inner; i++) indices[i] = 0;
    return;
  }
  if (op == kMax) return extreme<T, true>(x, outer, size, inner, out, indices);
  if (op == kMin) return extreme<T, false>(x, outer, size, inner, out, indices);
  constexpr int64_t kTile = 256;
  for (int64_t o = 0; o < outer; o++) {
    const T* xo = x + o * size * inner;
    T* oo = out + o * inner;
    if (op == kSum && inner == 1) {
      *oo = T(sum_f64(xo, size));
      continue;
    }
    if (op == kProd) {
      for (int64_t i = 0; i < inner; i++) oo[i] = T(1);
      for (int64_t s = 0; s < size; s++)
        for (int64_t i = 0; i < inner; i++) oo[i] *= xo[s * inner + i];
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kTile) {
      const int64_t len = std::min(kTile, inner - i0);
      double acc[kTile];
      for (int64_t i = 0; i < len; i++) acc[i] = 0;
      for (int64_t s = 0; s < size; s++) {
        const T* row = xo + s * inner + i0;
        for (int64_t i = 0; i < len; i++) acc[i] += double(row[i]);
      }
      for (int64_t i = 0; i < len; i++) oo[i0 + i] = T(acc[i]);
    }
  }
}
