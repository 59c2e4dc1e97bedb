// Unary ops and their gradients over contiguous runs, included inside each ISA namespace after
// vmath.inl. float32 uses the vector transcendentals; float64 calls libm per element.

// A run this long (one thread's share of one call) is written with non-temporal stores: with its
// inputs it overflows the last-level cache (32 MB on this project's EPYC machines) anyway, and a
// store that skips reading each line in first (the read-for-ownership) saves a third of a binary
// op's memory traffic and half of a unary op's. Shorter outputs keep ordinary stores, so that the
// next op may still find them in cache.
constexpr int64_t kStreamBytes = int64_t(16) << 20;

template <class S>
static inline bool streams(const typename S::T* out, int64_t n) {
  return kHasStream && n * int64_t(sizeof(typename S::T)) >= kStreamBytes &&
         reinterpret_cast<uintptr_t>(out) % sizeof(typename S::V) == 0;
}

// out[i..] = g(i) for whole vectors from i on; returns where the whole vectors end. Streams (and
// fences) when streams<S> says so. g may read out[j] for j >= i only at its own index (in place).
template <class S, class G>
static inline int64_t write_vectors(typename S::T* out, int64_t i, int64_t n, G g) {
  constexpr int W = S::W;
  if (streams<S>(out + i, n - i)) {
    for (; i + W <= n; i += W) S::stream(out + i, g(i));
    stream_fence();
    return i;
  }
  for (; i + W <= n; i += W) S::store(out + i, g(i));
  return i;
}

// Applies f to whole vectors, then to a zero-padded copy of the tail.
template <class S, class F>
static inline void map1(const typename S::T* x, typename S::T* out, int64_t n, F f) {
  using T = typename S::T;
  constexpr int W = S::W;
  int64_t i = write_vectors<S>(out, 0, n, [&](int64_t j) { return f(S::load(x + j)); });
  if (i < n) {
    T buf[W] = {};
    for (int64_t j = i; j < n; j++) buf[j - i] = x[j];
    S::store(buf, f(S::load(buf)));
    for (int64_t j = i; j < n; j++) out[j] = buf[j - i];
  }
}

template <class S, class F>
static inline void map2(const typename S::T* a, const typename S::T* b, typename S::T* out, int64_t n, F f) {
  using T = typename S::T;
  constexpr int W = S::W;
  int64_t i = write_vectors<S>(out, 0, n, [&](int64_t j) { return f(S::load(a + j), S::load(b + j)); });
  if (i < n) {
    T ba[W] = {}, bb[W] = {};
    for (int64_t j = i; j < n; j++) ba[j - i] = a[j], bb[j - i] = b[j];
    S::store(ba, f(S::load(ba), S::load(bb)));
    for (int64_t j = i; j < n; j++) out[j] = ba[j - i];
  }
}

template <class T, class F>
static inline void map1_scalar(const T* x, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; i++) out[i] = f(x[i]);
}
template <class T, class F>
static inline void map2_scalar(const T* a, const T* b, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; i++) out[i] = f(a[i], b[i]);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluTanhC = 0.044715;

// x^p with the exponents training uses most done exactly and fast. (Not sqrt for 0.5: pow(-inf,
// 0.5) is +inf and pow(-0, 0.5) is +0, as in the reference.)
template <class T>
static inline T pow_scalar(T x, T p) {
  if (p == T(2)) return x * x;
  if (p == T(1)) return x;
  return std::pow(x, p);
}

// gelu_tanh as x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): the same function as
// 0.5 x (1 + tanh u) without its cancellation for negative x.
template <class T>
static inline T gelu_tanh_u2(T x) {
  return T(2 * kSqrt2OverPi) * (x + T(kGeluTanhC) * x * x * x);
}

template <class S>
static void unary(int op, const typename S::T* x, typename S::T* out, int64_t n, typename S::T p0,
                  typename S::T p1) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr bool kF32 = std::is_same_v<T, float>;
  const V one = S::set1(T(1)), zero = S::zero(), vp0 = S::set1(p0), vp1 = S::set1(p1);
  switch (op) {
    case kNeg: return map1<S>(x, out, n, [](V v) { return S::neg(v); });
    case kAbs: return map1<S>(x, out, n, [](V v) { return S::abs(v); });
    case kSqrt: return map1<S>(x, out, n, [](V v) { return S::sqrt(v); });
    case kRsqrt: return map1<S>(x, out, n, [&](V v) { return S::div(one, S::sqrt(v)); });
    case kRelu: return map1<S>(x, out, n, [&](V v) { return S::max_raw(zero, v); });
    case kSign:
      return map1<S>(x, out, n, [&](V v) {
        return S::select(S::gt(v, zero), one, S::select(S::lt(v, zero), S::neg(one), zero));
      });
    case kReciprocal: return map1<S>(x, out, n, [&](V v) { return S::div(one, v); });
    case kSquare: return map1<S>(x, out, n, [](V v) { return S::mul(v, v); });
    case kClamp: return map1<S>(x, out, n, [&](V v) { return S::min_raw(vp1, S::max_raw(vp0, v)); });
    case kAddScalar: return map1<S>(x, out, n, [&](V v) { return S::add(v, vp0); });
    case kMulScalar: return map1<S>(x, out, n, [&](V v) { return S::mul(v, vp0); });
    case kRsubScalar: return map1<S>(x, out, n, [&](V v) { return S::sub(vp0, v); });
    case kRdivScalar: return map1<S>(x, out, n, [&](V v) { return S::div(vp0, v); });
    case kPowScalar:
      if (p0 == T(2)) return map1<S>(x, out, n, [](V v) { return S::mul(v, v); });
      return map1_scalar(x, out, n, [=](T v) { return pow_scalar(v, p0); });
    default: break;
  }
  if constexpr (kF32) {
    switch (op) {
      case kExp: return map1<S>(x, out, n, [](V v) { return vexp(v); });
      case kLog: return map1<S>(x, out, n, [](V v) { return vlog(v); });
      case kTanh: return map1<S>(x, out, n, [](V v) { return vtanh(v); });
      case kSigmoid: return map1<S>(x, out, n, [](V v) { return vsigmoid(v); });
      case kSilu: return map1<S>(x, out, n, [](V v) { return S::mul(v, vsigmoid(v)); });
      case kGelu: return map1<S>(x, out, n, [](V v) { return S::mul(S::mul(v, S::set1(0.5f)), vtwo_phi(v)); });
      case kGeluTanh:
        return map1<S>(x, out, n, [](V v) {
          const V u2 = S::mul(S::set1(float(2 * kSqrt2OverPi)), S::fmadd(S::mul(S::set1(float(kGeluTanhC)), v), S::mul(v, v), v));
          return S::mul(v, vsigmoid(u2));
        });
      default: return;
    }
  } else {
    switch (op) {
      case kExp: return map1_scalar(x, out, n, [](T v) { return std::exp(v); });
      case kLog: return map1_scalar(x, out, n, [](T v) { return std::log(v); });
      case kTanh: return map1_scalar(x, out, n, [](T v) { return std::tanh(v); });
      case kSigmoid: return map1_scalar(x, out, n, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
      case kSilu: return map1_scalar(x, out, n, [](T v) { return v / (T(1) + std::exp(-v)); });
      case kGelu: return map1_scalar(x, out, n, [](T v) { return T(0.5) * v * std::erfc(-v * T(kInvSqrt2)); });
      case kGeluTanh: return map1_scalar(x, out, n, [](T v) { return v / (T(1) + std::exp(-gelu_tanh_u2(v))); });
      default: return;
    }
  }
}

template <class S>
static void unary_grad(int op, const typename S::T* g, const typename S::T* s, typename S::T* out, int64_t n,
                       typename S::T p0, typename S::T p1) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr bool kF32 = std::is_same_v<T, float>;
  const V one = S::set1(T(1)), zero = S::zero(), half = S::set1(T(0.5));
  switch (op) {
    // PyTorch's threshold_backward: zero where x <= 0, so a NaN input passes the gradient.
    case kGradRelu: return map2<S>(g, s, out, n, [&](V gv, V x) { return S::select(S::le(x, zero), zero, gv); });
    // grad * sgn(x), with sgn(0) = sgn(NaN) = 0 (multiplied: an infinite grad at 0 gives NaN).
    case kGradAbs:
      return map2<S>(g, s, out, n, [&](V gv, V x) {
        return S::mul(gv, S::select(S::gt(x, zero), one, S::select(S::lt(x, zero), S::neg(one), zero)));
      });
    // Selected, not multiplied, so that an infinite gradient outside the range gives 0.
    case kGradClamp:
      return map2<S>(g, s, out, n, [&](V gv, V x) {
        return S::select(S::ge(x, S::set1(p0)), S::select(S::le(x, S::set1(p1)), gv, zero), zero);
      });
    case kGradTanh: return map2<S>(g, s, out, n, [&](V gv, V y) { return S::mul(gv, S::sub(one, S::mul(y, y))); });
    case kGradSigmoid:
      return map2<S>(g, s, out, n, [&](V gv, V y) { return S::mul(gv, S::mul(y, S::sub(one, y))); });
    case kGradExp: return map2<S>(g, s, out, n, [](V gv, V y) { return S::mul(gv, y); });
    case kGradSqrt: return map2<S>(g, s, out, n, [&](V gv, V y) { return S::div(gv, S::add(y, y)); });
    case kGradRsqrt:
      // Multiplied in an order that doesn't overflow before the grad scales y's powers down.
      return map2<S>(g, s, out, n, [&](V gv, V y) { return S::mul(S::mul(S::mul(S::mul(gv, S::set1(T(-0.5))), y), y), y); });
    case kGradReciprocal: return map2<S>(g, s, out, n, [](V gv, V y) { return S::neg(S::mul(S::mul(gv, y), y)); });
    case kGradPowScalar:
      // grad * 0 for a zero exponent (so a NaN or infinite grad gives NaN, as in the reference),
      // else grad * p * x^(p-1).
      if (p0 == T(0)) return map2_scalar(g, s, out, n, [](T gv, T) { return gv * T(0); });
      return map2_scalar(g, s, out, n, [=](T gv, T x) { return gv * p0 * pow_scalar(x, p0 - T(1)); });
    default: break;
  }
  if constexpr (kF32) {
    switch (op) {
      case kGradSilu:
        return map2<S>(g, s, out, n, [&](V gv, V x) {
          const V sg = vsigmoid(x);
          return S::mul(gv, S::mul(sg, S::fmadd(x, S::sub(one, sg), one)));
        });
      case kGradGelu:
        return map2<S>(g, s, out, n, [&](V gv, V x) {
          const V pdf = S::mul(S::set1(float(kInvSqrt2Pi)), vexp(S::mul(S::mul(x, x), S::set1(-0.5f))));
          return S::mul(gv, S::fmadd(half, vtwo_phi(x), S::mul(x, pdf)));
        });
      case kGradGeluTanh:
        return map2<S>(g, s, out, n, [&](V gv, V x) {
          const V x2 = S::mul(x, x);
          const V u2 = S::mul(S::set1(float(2 * kSqrt2OverPi)), S::fmadd(S::mul(S::set1(float(kGeluTanhC)), x), x2, x));
          const V sg = vsigmoid(u2);
          const V du = S::mul(S::set1(float(kSqrt2OverPi)), S::fmadd(S::set1(float(3 * kGeluTanhC)), x2, one));
          const V d = S::fmadd(S::mul(S::add(x, x), S::mul(sg, S::sub(one, sg))), du, sg);
          return S::mul(gv, d);
        });
      default: return;
    }
  } else {
    (void)half;
    switch (op) {
      case kGradSilu:
        return map2_scalar(g, s, out, n, [](T gv, T x) {
          const T sg = T(1) / (T(1) + std::exp(-x));
          return gv * sg * (T(1) + x * (T(1) - sg));
        });
      case kGradGelu:
        return map2_scalar(g, s, out, n, [](T gv, T x) {
          return gv * (T(0.5) * std::erfc(-x * T(kInvSqrt2)) + x * T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x));
        });
      case kGradGeluTanh:
        return map2_scalar(g, s, out, n, [](T gv, T x) {
          const T sg = T(1) / (T(1) + std::exp(-gelu_tanh_u2(x)));
          const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluTanhC) * x * x);
          return gv * (sg + T(2) * x * sg * (T(1) - sg) * du);
        });
      default: return;
    }
  }
}
