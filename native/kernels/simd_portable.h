// Portable vector types (GCC/Clang vector extensions, 16 bytes: SSE2 on x86-64, NEON on ARM) for the
// templated kernels. Included only inside `namespace rt_portable` by isa_portable.cc.
//
// The contract every ISA header fulfils, for F32 (float) and F64 (double):
//   T, V (vector), M (comparison mask), W (lanes)
//   zero, set1, load/store (unaligned), add, sub, mul, div, fmadd(a,b,c)=a*b+c, sqrt,
//   max_raw/min_raw (x86 semantics: the second operand when either is NaN), abs, neg,
//   lt/le/gt/ge/eq/isnan -> M, mask_or, select(m, a, b) = m ? a : b, round (to nearest even),
//   hsum, prefetch, kHasTranspose + transpose_store (a W x W register transpose, see simd_avx2.h;
//   a no-op declared for ISAs without one); F32 adds pow2i (2^n for integral n in [-126,127]) and
//   frexp; F64 adds load_f32 (W floats widened).

template <class To, class From>
static inline To bit_cast_vec(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast_vec needs equal sizes");
  To out;
  __builtin_memcpy(&out, &v, sizeof out);
  return out;
}

struct F32 {
  using T = float;
  typedef float V __attribute__((vector_size(16)));
  typedef int32_t M __attribute__((vector_size(16)));
  static constexpr int W = 4;
  static V zero() { return V{0, 0, 0, 0}; }
  static V set1(T x) { return V{x, x, x, x}; }
  static V load(const T* p) { V v; __builtin_memcpy(&v, p, sizeof v); return v; }
  static void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  static void stream(T* p, V v) { store(p, v); }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fmadd(V a, V b, V c) { return a * b + c; }
  static V sqrt(V a) { V r; for (int i = 0; i < W; i++) r[i] = __builtin_sqrtf(a[i]); return r; }
  static V max_raw(V a, V b) { return a > b ? a : b; }
  static V min_raw(V a, V b) { return a < b ? a : b; }
  static V abs(V a) { return bit_cast_vec<V>(bit_cast_vec<M>(a) & 0x7fffffff); }
  static V neg(V a) { return -a; }
  static M lt(V a, V b) { return a < b; }
  static M le(V a, V b) { return a <= b; }
  static M gt(V a, V b) { return a > b; }
  static M ge(V a, V b) { return a >= b; }
  static M eq(V a, V b) { return a == b; }
  static M isnan(V a) { return a != a; }
  static M mask_or(M a, M b) { return a | b; }
  static V select(M m, V a, V b) { return m ? a : b; }
  static V round(V a) {
    // Adding and subtracting 1.5*2^23 rounds to nearest even for |a| < 2^22, the range callers use.
    const V magic = set1(12582912.0f);
    return (a + magic) - magic;
  }
  static V pow2i(V n) {
    M e = __builtin_convertvector(n, M) + 127;
    return bit_cast_vec<V>(e << 23);
  }
  static V frexp(V x, V* e) {
    M bits = bit_cast_vec<M>(x);
    *e = __builtin_convertvector(((bits >> 23) & 0xff) - 126, V);
    return bit_cast_vec<V>((bits & 0x007fffff) | 0x3f000000);
  }
  static T hsum(V v) { return (v[0] + v[2]) + (v[1] + v[3]); }
  static void prefetch(const void* p) { __builtin_prefetch(p); }
  static constexpr bool kHasTranspose = false;
  static void transpose_store(const T*, int64_t, int, T*, int64_t) {}
};

struct F64 {
  using T = double;
  typedef double V __attribute__((vector_size(16)));
  typedef int64_t M __attribute__((vector_size(16)));
  static constexpr int W = 2;
  static V zero() { return V{0, 0}; }
  static V set1(T x) { return V{x, x}; }
  static V load(const T* p) { V v; __builtin_memcpy(&v, p, sizeof v); return v; }
  static void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  static void stream(T* p, V v) { store(p, v); }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fmadd(V a, V b, V c) { return a * b + c; }
  static V sqrt(V a) { return V{__builtin_sqrt(a[0]), __builtin_sqrt(a[1])}; }
  static V max_raw(V a, V b) { return a > b ? a : b; }
  static V min_raw(V a, V b) { return a < b ? a : b; }
  static V abs(V a) { return bit_cast_vec<V>(bit_cast_vec<M>(a) & 0x7fffffffffffffffLL); }
  static V neg(V a) { return -a; }
  static M lt(V a, V b) { return a < b; }
  static M le(V a, V b) { return a <= b; }
  static M gt(V a, V b) { return a > b; }
  static M ge(V a, V b) { return a >= b; }
  static M eq(V a, V b) { return a == b; }
  static M isnan(V a) { return a != a; }
  static M mask_or(M a, M b) { return a | b; }
  static V select(M m, V a, V b) { return m ? a : b; }
  static V round(V a) {
    const V magic = set1(6755399441055744.0);
    return (a + magic) - magic;
  }
  static V load_f32(const float* p) { return V{p[0], p[1]}; }
  static T hsum(V v) { return v[0] + v[1]; }
  static void prefetch(const void* p) { __builtin_prefetch(p); }
  static constexpr bool kHasTranspose = false;
  static void transpose_store(const T*, int64_t, int, T*, int64_t) {}
};

// No non-temporal stores here: stream is store.
constexpr bool kHasStream = false;
static inline void stream_fence() {}

#define RT_ISA_NAME "portable"
