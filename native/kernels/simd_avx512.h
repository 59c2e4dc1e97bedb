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
  // The contract of simd_avx2.h's: transposes the 16 x 16 tile whose first `rows` rows are rows of
  // s (ls apart; the others read as zeros) and stores its rows at d, ld apart, in increasing order
  // (ld may be below 16: each store then overwrites the previous one's tail). Without it the GEMM
  // packed a row-major A one scalar at a time, 7-9% of a square product's time on a Xeon.
  static constexpr bool kHasTranspose = true;
  static void transpose_store(const T* s, int64_t ls, int rows, T* d, int64_t ld) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = i < rows ? _mm512_loadu_ps(s + i * ls) : _mm512_setzero_ps();
    // Stage 1: interleave pairs of rows (32-bit elements), stage 2: pairs of pairs (64-bit), then
    // 128-bit lanes across groups of four rows and of eight rows.
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
      r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
      r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
      r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
      r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    // r[4g + c] now holds, in each 128-bit lane L, column 4L + c of rows 4g..4g+3.
    for (int g = 0; g < 2; g++)
      for (int c = 0; c < 4; c++) {
        const int lo = 8 * g + c, hi = 8 * g + 4 + c;
        t[lo] = _mm512_shuffle_f32x4(r[lo], r[hi], _MM_SHUFFLE(2, 0, 2, 0));
        t[hi] = _mm512_shuffle_f32x4(r[lo], r[hi], _MM_SHUFFLE(3, 1, 3, 1));
      }
    // t[8g + c]'s lanes: column c of rows 8g..8g+3, column 8 + c of them, column c of rows
    // 8g+4..8g+7, column 8 + c of them; t[8g + 4 + c] the same for columns 4 + c and 12 + c.
    for (int c = 0; c < 8; c++) {
      r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], _MM_SHUFFLE(2, 0, 2, 0));
      r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(d + i * ld, r[i]);
  }
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
  // F32's transpose for 8 x 8 doubles (the stages after the first are the same lane shuffles).
  static constexpr bool kHasTranspose = true;
  static void transpose_store(const T* s, int64_t ls, int rows, T* d, int64_t ld) {
    __m512d r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = i < rows ? _mm512_loadu_pd(s + i * ls) : _mm512_setzero_pd();
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
    }
    // t[2j + e]'s lane L: column 2L + e of rows 2j, 2j + 1. Gather lanes 0, 2 and 1, 3 of row
    // pairs (0, 1) with (2, 3) and (4, 5) with (6, 7), then the same across the two halves.
    for (int e = 0; e < 2; e++)
      for (int h = 0; h < 2; h++) {
        r[4 * h + e] = _mm512_shuffle_f64x2(t[4 * h + e], t[4 * h + e + 2], _MM_SHUFFLE(2, 0, 2, 0));
        r[4 * h + e + 2] = _mm512_shuffle_f64x2(t[4 * h + e], t[4 * h + e + 2], _MM_SHUFFLE(3, 1, 3, 1));
      }
    // r[4h + c] (c < 4)'s lanes: column c of rows 4h, 4h + 1, column 4 + c of them, column c of
    // rows 4h + 2, 4h + 3, column 4 + c of them.
    for (int c = 0; c < 4; c++) {
      t[c] = _mm512_shuffle_f64x2(r[c], r[4 + c], _MM_SHUFFLE(2, 0, 2, 0));
      t[4 + c] = _mm512_shuffle_f64x2(r[c], r[4 + c], _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int i = 0; i < 8; i++) _mm512_storeu_pd(d + i * ld, t[i]);
  }
};

// Non-temporal stores (stream) need their address aligned to sizeof(V); fence orders them.
constexpr bool kHasStream = true;
static inline void stream_fence() { _mm_sfence(); }

#define RT_ISA_NAME "avx512"
