// One run of a binary op, included inside each ISA namespace. The strided N-d walk lives in
// strided.cc; here each operand is either contiguous (stride 1), broadcast (stride 0) or strided.

template <class S, class VecF, class ScalarF>
static inline void binary_run(const typename S::T* a, int64_t sa, const typename S::T* b, int64_t sb,
                              typename S::T* out, int64_t n, VecF vf, ScalarF sf) {
  using V = typename S::V;
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
    i = write_vectors<S>(out, 0, n, [&](int64_t j) { return vf(S::load(a + j), S::load(b + j)); });
  } else if (sa == 0 && sb == 1) {
    const V va = S::set1(a[0]);
    i = write_vectors<S>(out, 0, n, [&](int64_t j) { return vf(va, S::load(b + j)); });
  } else if (sa == 1 && sb == 0) {
    const V vb = S::set1(b[0]);
    i = write_vectors<S>(out, 0, n, [&](int64_t j) { return vf(S::load(a + j), vb); });
  }
  for (; i < n; i++) out[i] = sf(a[i * sa], b[i * sb]);
}

template <class S>
static void binary(int op, const typename S::T* a, int64_t sa, const typename S::T* b, int64_t sb,
                   typename S::T* out, int64_t n) {
  using T = typename S::T;
  using V = typename S::V;
  switch (op) {
    case kAdd:
      return binary_run<S>(a, sa, b, sb, out, n, [](V x, V y) { return S::add(x, y); }, [](T x, T y) { return x + y; });
    case kSub:
      return binary_run<S>(a, sa, b, sb, out, n, [](V x, V y) { return S::sub(x, y); }, [](T x, T y) { return x - y; });
    case kMul:
      return binary_run<S>(a, sa, b, sb, out, n, [](V x, V y) { return S::mul(x, y); }, [](T x, T y) { return x * y; });
    case kDiv:
      return binary_run<S>(a, sa, b, sb, out, n, [](V x, V y) { return S::div(x, y); }, [](T x, T y) { return x / y; });
    // NaN in either operand gives NaN, as torch.maximum/minimum.
    case kMaximum:
      return binary_run<S>(
          a, sa, b, sb, out, n, [](V x, V y) { return S::select(S::isnan(x), x, S::max_raw(x, y)); },
          [](T x, T y) { return x != x || y != y ? x + y : (x > y ? x : y); });
    case kMinimum:
      return binary_run<S>(
          a, sa, b, sb, out, n, [](V x, V y) { return S::select(S::isnan(x), x, S::min_raw(x, y)); },
          [](T x, T y) { return x != x || y != y ? x + y : (x < y ? x : y); });
    case kPow:
      if (sb == 0 && b[0] == T(2))
        return binary_run<S>(a, sa, b, sb, out, n, [](V x, V) { return S::mul(x, x); }, [](T x, T) { return x * x; });
      for (int64_t i = 0; i < n; i++) out[i] = std::pow(a[i * sa], b[i * sb]);
      return;
    default: return;
  }
}

template <class T, class F>
static inline void compare_run(const T* a, int64_t sa, const T* b, int64_t sb, uint8_t* out, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; i++) out[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const T y = b[0];
    for (int64_t i = 0; i < n; i++) out[i] = f(a[i], y);
  } else {
    for (int64_t i = 0; i < n; i++) out[i] = f(a[i * sa], b[i * sb]);
  }
}

template <class S>
static void compare(int op, const typename S::T* a, int64_t sa, const typename S::T* b, int64_t sb, uint8_t* out,
                    int64_t n) {
  using T = typename S::T;
  switch (op) {
    case kEq: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x == y; });
    case kNe: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x != y; });
    case kLt: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x < y; });
    case kLe: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x <= y; });
    case kGt: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x > y; });
    case kGe: return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x >= y; });
    case kLogicalAnd:
      return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x != T(0) && y != T(0); });
    case kLogicalOr:
      return compare_run(a, sa, b, sb, out, n, [](T x, T y) -> uint8_t { return x != T(0) || y != T(0); });
    default: return;
  }
}
