// AVX2+FMA vector types for the templated kernels. Included only inside `namespace rt_avx2`, after
// `#pragma GCC target("avx2,fma")`, by isa_avx2.cc; <immintrin.h> is included before the pragma.
// Every ISA header provides the same members (see simd_portable.h for the contract).

struct F32 {
  using T = float;
  using V = __m256;
  using M = __m256;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static void stream(T* p, V v) { _mm256_stream_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  // x86 semantics: when either operand is NaN the second one is returned.
  static V max_raw(V a, V b) { return _mm256_max_ps(a, b); }
  static V min_raw(V a, V b) { return _mm256_min_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V neg(V a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M le(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static M gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M isnan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static M mask_or(M a, M b) { return _mm256_or_ps(a, b); }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // 2^n for integral n in [-126, 127].
  static V pow2i(V n) {
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // Splits a positive normal x into m in [0.5, 1) and e with x = m * 2^e.
  static V frexp(V x, V* e) {
    __m256i bits = _mm256_castps_si256(x);
    __m256i ex = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126));
    *e = _mm256_cvtepi32_ps(ex);
    __m256i mant = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000));
    return _mm256_castsi256_ps(mant);
  }
  static T hsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }
  // Transposes the W x W tile whose rows are `rows` rows of s (ls apart; the missing ones are
  // don't-care) and stores its rows at d, ld apart, in increasing order (so ld may be below W and
  // each store overwrite the previous one's tail).
  static constexpr bool kHasTranspose = true;
  static void transpose_store(const T* s, int64_t ls, int rows, T* d, int64_t ld) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + (i < rows ? i : 0) * ls);
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
      u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    for (int i = 0; i < 4; i++) r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    for (int i = 0; i < 8; i++) _mm256_storeu_ps(d + i * ld, r[i]);
  }
};

struct F64 {
  using T = double;
  using V = __m256d;
  using M = __m256d;
  static constexpr int W = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static void stream(T* p, V v) { _mm256_stream_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V sqrt(V a) { return _mm256_sqrt_pd(a); }
  static V max_raw(V a, V b) { return _mm256_max_pd(a, b); }
  static V min_raw(V a, V b) { return _mm256_min_pd(a, b); }
  static V abs(V a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  static V neg(V a) { return _mm256_xor_pd(_mm256_set1_pd(-0.0), a); }
  static M lt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
  static M le(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
  static M gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  static M isnan(V a) { return _mm256_cmp_pd(a, a, _CMP_UNORD_Q); }
  static M mask_or(M a, M b) { return _mm256_or_pd(a, b); }
  static V select(M m, V a, V b) { return _mm256_blendv_pd(b, a, m); }
  static V round(V a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // W floats widened to doubles, for float32 sums accumulated in float64.
  static V load_f32(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static T hsum(V v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
  }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }
  static constexpr bool kHasTranspose = true;
  static void transpose_store(const T* s, int64_t ls, int rows, T* d, int64_t ld) {
    const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + (rows > 1 ? ls : 0));
    const __m256d r2 = _mm256_loadu_pd(s + (rows > 2 ? 2 * ls : 0)), r3 = _mm256_loadu_pd(s + (rows > 3 ? 3 * ls : 0));
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(d + ld, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(t1, t3, 0x31));
  }
};

// Non-temporal stores (stream) need their address aligned to sizeof(V); fence orders them.
constexpr bool kHasStream = true;
static inline void stream_fence() { _mm_sfence(); }

#define RT_ISA_NAME "avx2"
