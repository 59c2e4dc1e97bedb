// AVX-512F vector types for the templated kernels. Included only inside `namespace rt_avx512`, after
// `#pragma GCC target("avx512f")`, by isa_avx512.cc. Same contract as simd_portable.h; masks are
// the k-registers AVX-512 compares produce.

struct F32 {
  using T = float;
  using V = __m512;
  using M = __mmask16;
  static constexpr int W = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(T x) { return _mm512_set1_ps(x); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static void stream(T* p, V v) { _mm512_stream_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V max_raw(V a, V b) { return _mm512_max_ps(a, b); }
  static V min_raw(V a, V b) { return _mm512_min_ps(a, b); }
  static V abs(V a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff))); }
  static V neg(V a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN))); }
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M le(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static M gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M isnan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static M mask_or(M a, M b) { return static_cast<M>(a | b); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V pow2i(V n) {
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  static V frexp(V x, V* e) {
    __m512i bits = _mm512_castps_si512(x);
    __m512i ex = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126));
    *e = _mm512_cvtepi32_ps(ex);
    __m512i mant = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x3f000000));
    return _mm512_castsi512_ps(mant);
  }
  static T hsum(V v) { return _mm512_reduce_add_ps(v); }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }
  static constexpr bool kHasTranspose = false;
  static void transpose_store(const T*, int64_t, int, T*, int64_t) {}
};

struct F64 {
  using T = double;
  using V = __m512d;
  using M = __mmask8;
  static constexpr int W = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V set1(T x) { return _mm512_set1_pd(x); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static void stream(T* p, V v) { _mm512_stream_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V div(V a, V b) { return _mm512_div_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V sqrt(V a) { return _mm512_sqrt_pd(a); }
  static V max_raw(V a, V b) { return _mm512_max_pd(a, b); }
  static V min_raw(V a, V b) { return _mm512_min_pd(a, b); }
  static V abs(V a) { return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(0x7fffffffffffffffLL))); }
  static V neg(V a) { return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(INT64_MIN))); }
  static M lt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
  static M le(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
  static M gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
  static M eq(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
  static M isnan(V a) { return _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q); }
  static M mask_or(M a, M b) { return static_cast<M>(a | b); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_pd(m, b, a); }
  static V round(V a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V load_f32(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static T hsum(V v) { return _mm512_reduce_add_pd(v); }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }
  static constexpr bool kHasTranspose = false;
  static void transpose_store(const T*, int64_t, int, T*, int64_t) {}
};

// Non-temporal stores (stream) need their address aligned to sizeof(V); fence orders them.
constexpr bool kHasStream = true;
static inline void stream_fence() { _mm_sfence(); }

#define RT_ISA_NAME "avx512"
