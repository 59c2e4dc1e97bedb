// Reductions of the middle axis of [outer, size, inner], and the float64 row sums the norms use.
// Included inside each ISA namespace. A long float32 axis keeps float32 accuracy: float32 adds run
// only over short blocks, whose partial sums are folded into float64 (see sum_f64).

// Adds the W float32 lanes of v to the W doubles at acc (W / F64::W widening loads).
static inline void add_lanes_f64(double* acc, F32::V v) {
  alignas(64) float lanes[F32::W];
  F32::store(lanes, v);
  for (int j = 0; j < F32::W; j += F64::W) F64::store(acc + j, F64::add(F64::load(acc + j), F64::load_f32(lanes + j)));
}

// The float32 rows a float32 lane adds before its partial sum goes to float64. Widening every
// float32 to float64 before adding (as this sum did) made it bound by the conversions: 0.69x
// PyTorch's sum at 1 MB. A lane's float32 error grows with the values it adds, so 16 of them
// (plus the tree that folds the accumulators) keep each block's rounding error near 20 ulps of the
// block's magnitude, and float64 then adds blocks with no loss that grows with n.
constexpr int kF32BlockRows = 16;

// Σ x[i] with every element widened to float64 first. Eight accumulators: each add waits on the
// one before it in its chain (several cycles), so with two chains a sum that fits in L2 ran at a
// fraction of what its loads allow.
template <class T>
static inline double sum_wide(const T* x, int64_t n) {
  constexpr int W = F64::W;
  constexpr int K = 8;
  auto load = [](const T* p) {
    if constexpr (std::is_same_v<T, float>) return F64::load_f32(p);
    else return F64::load(p);
  };
  F64::V acc[K];
  for (int k = 0; k < K; k++) acc[k] = F64::zero();
  int64_t i = 0;
  for (; i + K * W <= n; i += K * W)
    for (int k = 0; k < K; k++) acc[k] = F64::add(acc[k], load(x + i + k * W));
  for (; i + W <= n; i += W) acc[0] = F64::add(acc[0], load(x + i));
  for (int k = 0; k < K / 2; k++) acc[k] = F64::add(acc[k], acc[k + K / 2]);
  double s = F64::hsum(F64::add(F64::add(acc[0], acc[2]), F64::add(acc[1], acc[3])));
  for (; i < n; i++) s += double(x[i]);
  return s;
}

// Σ x[i] in float64. float32 is added in float32 over blocks (kF32BlockRows per lane of eight
// accumulators) folded into float64; a block that overflowed float32 (values near its largest) has
// the sum redone widened.
template <class T>
static inline double sum_f64(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    constexpr int K = 8;
    constexpr int W = F32::W;
    constexpr int64_t kBlock = int64_t(kF32BlockRows) * K * W;
    alignas(64) double total[W] = {};
    int64_t i = 0;
    while (i + K * W <= n) {
      const int64_t end = std::min(n - (n - i) % (K * W), i + kBlock);
      F32::V acc[K];
      for (int k = 0; k < K; k++) acc[k] = F32::zero();
      for (; i < end; i += K * W)
        for (int k = 0; k < K; k++) acc[k] = F32::add(acc[k], F32::load(x + i + k * W));
      for (int k = 0; k < K / 2; k++) acc[k] = F32::add(acc[k], acc[k + K / 2]);
      add_lanes_f64(total, F32::add(F32::add(acc[0], acc[2]), F32::add(acc[1], acc[3])));
    }
    for (; i + W <= n; i += W) add_lanes_f64(total, F32::load(x + i));
    double s = 0;
    for (int j = 0; j < W; j++) s += total[j];
    for (; i < n; i++) s += double(x[i]);
    if (std::isfinite(s)) return s;
  }
  return sum_wide(x, n);
}

// Σ (x[i] - c) and Σ (x[i] - c)² in float64 about a centre c (layer norm passes an estimate of
// the mean and recovers the exact one from Σ (x - c), so that the variance of a row with a large
// mean and a tiny spread does not carry the estimate's error squared).
struct Deviations {
  double centre, sum, sum_sq;
};

// Every element widened to float64 first.
template <class T>
static inline Deviations deviations_wide(const T* x, int64_t n, double c) {
  constexpr int W = F64::W;
  const F64::V vc = F64::set1(c);
  F64::V s0 = F64::zero(), s1 = F64::zero(), q0 = F64::zero(), q1 = F64::zero();
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
    s0 = F64::add(s0, d0);
    s1 = F64::add(s1, d1);
    q0 = F64::fmadd(d0, d0, q0);
    q1 = F64::fmadd(d1, d1, q1);
  }
  double sum = F64::hsum(F64::add(s0, s1)), sq = F64::hsum(F64::add(q0, q1));
  for (; i < n; i++) {
    const double d = double(x[i]) - c;
    sum += d, sq += d * d;
  }
  return {c, sum, sq};
}

// float32 as sum_f64 adds: deviations from c rounded to float32 (the centre returned), exact in
// float32 for elements within a factor 2 of it, squared and summed in float32 over blocks of
// kF32BlockRows per lane, folded into float64. Squares that overflowed float32 (values above
// ~1e19) are redone widened, so that var and layer norm stay finite there.
template <class T>
static inline Deviations deviations(const T* x, int64_t n, double c) {
  if constexpr (std::is_same_v<T, float>) {
    constexpr int W = F32::W;
    constexpr int K = 4;
    const float cf = float(c);
    const F32::V vc = F32::set1(cf);
    alignas(64) double d1[W] = {}, d2[W] = {};
    int64_t i = 0;
    while (i + K * W <= n) {
      const int64_t end = std::min(n - (n - i) % (K * W), i + int64_t(kF32BlockRows) * K * W);
      F32::V s1[K], s2[K];
      for (int k = 0; k < K; k++) s1[k] = s2[k] = F32::zero();
      for (; i < end; i += K * W)
        for (int k = 0; k < K; k++) {
          const F32::V d = F32::sub(F32::load(x + i + k * W), vc);
          s1[k] = F32::add(s1[k], d);
          s2[k] = F32::fmadd(d, d, s2[k]);
        }
      add_lanes_f64(d1, F32::add(F32::add(s1[0], s1[1]), F32::add(s1[2], s1[3])));
      add_lanes_f64(d2, F32::add(F32::add(s2[0], s2[1]), F32::add(s2[2], s2[3])));
    }
    double sum = 0, sq = 0;
    for (int j = 0; j < W; j++) sum += d1[j], sq += d2[j];
    for (; i < n; i++) {
      const double d = double(x[i] - cf);
      sum += d, sq += d * d;
    }
    if (std::isfinite(sq)) return {double(cf), sum, sq};
  }
  return deviations_wide(x, n, c);
}

template <class T>
static double sum_squares(const T* x, int64_t n) {
  // Widened: the gradient norm's contract is float64's accuracy (clip_grad_norm, once per step).
  return deviations_wide(x, n, 0.0).sum_sq;
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

// out[i] = Σ_s x[s * inner + i] for i < inner, in float64 (float32: float32 column sums over blocks
// of kF32BlockRows rows folded into float64, as in sum_f64), a tile of columns at a time so that
// the float64 totals stay in L1.
template <class T>
static void sum_columns(const T* x, int64_t size, int64_t inner, T* out) {
  constexpr int64_t kTile = 256;
  for (int64_t i0 = 0; i0 < inner; i0 += kTile) {
    const int64_t len = std::min(kTile, inner - i0);
    alignas(64) double acc[kTile];
    for (int64_t i = 0; i < len; i++) acc[i] = 0;
    const T* xi = x + i0;
    if constexpr (std::is_same_v<T, float>) {
      constexpr int W = F32::W;
      for (int64_t s0 = 0; s0 < size; s0 += kF32BlockRows) {
        const int64_t s1 = std::min(size, s0 + kF32BlockRows);
        // Row by row over the whole tile (contiguous reads; rows inner apart by a power of two
        // read a few vectors at a time thrashed L1's sets), into float32 totals in L1.
        const int64_t vlen = len - len % W;
        alignas(64) float part[kTile];
        for (int64_t i = 0; i < vlen; i += W) F32::store(part + i, F32::load(xi + s0 * inner + i));
        for (int64_t s = s0 + 1; s < s1; s++) {
          const float* row = xi + s * inner;
          for (int64_t i = 0; i < vlen; i += W) F32::store(part + i, F32::add(F32::load(part + i), F32::load(row + i)));
        }
        for (int64_t i = 0; i < vlen; i += W) add_lanes_f64(acc + i, F32::load(part + i));
        for (int64_t s = s0; s < s1; s++)
          for (int64_t j = vlen; j < len; j++) acc[j] += double(xi[s * inner + j]);
      }
    } else {
      for (int64_t s = 0; s < size; s++) {
        const T* row = xi + s * inner;
        for (int64_t i = 0; i < len; i++) acc[i] += double(row[i]);
      }
    }
    for (int64_t i = 0; i < len; i++) out[i0 + i] = T(acc[i]);
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
    sum_columns(xo, size, inner, oo);
  }
}
