// Packing helpers shared by the bfloat16 GEMMs (isa_avx512bf16.cc: vdpbf16ps, isa_amx.cc: AMX
// tdpbf16ps). Both instructions multiply pairs of consecutive k, so both pack operands as 32-bit
// "pair words" holding (x[k], x[k+1]) in bfloat16, float32 values rounded while they are packed.
// Included inside each ISA file's own namespace, after its `#pragma GCC target(...)` (AVX-512
// F/BW/VL/DQ and BF16 at least), so each file gets its own copies compiled for its target and
// nothing is shared across translation units.
// Needs: <immintrin.h>, <algorithm>, <cstdint>, <cstring>, bf16_gemm.h's Bf16Operand in scope.

inline __mmask16 Mask16(int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}
inline __mmask32 Mask32(int64_t count) {
  return count >= 32 ? __mmask32(0xffffffffu) : count <= 0 ? __mmask32(0) : __mmask32((1u << count) - 1);
}

inline uint32_t ScalarBits(const Bf16Operand& op, int64_t offset) {
  if (op.bf16) return static_cast<const uint16_t*>(op.data)[offset];
  const float f = static_cast<const float*>(op.data)[offset];
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (f != f) return (u >> 16) | 0x0040;
  return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
}

// Float32 runs are rounded by vcvtne2ps2bf16 (nearest even, NaN quiet, one instruction for 32
// values). It reads float32 denormals as zero, as vdpbf16ps reads bfloat16 ones: the products are
// the same except for a float32 within half a bfloat16 ulp below the smallest normal, which rounds
// up to it in software and to zero here.
inline __m512i CvtRounded(__m512 hi, __m512 lo) { return (__m512i)_mm512_cvtne2ps_pbh(hi, lo); }

// Up to 32 elements contiguous along k (zeros past count) as 16 pair words, in order.
inline __m512i RunWords(const Bf16Operand& op, int64_t offset, int64_t count) {
  if (op.bf16) return _mm512_maskz_loadu_epi16(Mask32(count), static_cast<const uint16_t*>(op.data) + offset);
  const float* p = static_cast<const float*>(op.data) + offset;
  return CvtRounded(_mm512_maskz_loadu_ps(Mask16(count - 16), p + 16), _mm512_maskz_loadu_ps(Mask16(count), p));
}

// Words (row0[j], row1[j]) for up to 16 j from two element rows, row1 = row0 + stride (all zeros
// when !second), zeros past count.
inline __m512i PairWords(const Bf16Operand& op, int64_t offset, int64_t stride, bool second, int64_t count) {
  const __mmask16 m = Mask16(count);
  __m512i both;  // row0's 16 values, then row1's, as bfloat16
  if (op.bf16) {
    const uint16_t* p = static_cast<const uint16_t*>(op.data) + offset;
    const __m256i r0 = _mm256_maskz_loadu_epi16(m, p);
    const __m256i r1 = second ? _mm256_maskz_loadu_epi16(m, p + stride) : _mm256_setzero_si256();
    both = _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1);
  } else {
    const float* p = static_cast<const float*>(op.data) + offset;
    const __m512 r1 = second ? _mm512_maskz_loadu_ps(m, p + stride) : _mm512_setzero_ps();
    both = CvtRounded(r1, _mm512_maskz_loadu_ps(m, p));
  }
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                              21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(interleave, both);
}

// r[j][i] = r[i][j] for a 16 x 16 block of 32-bit words: unpacks of 32 and 64 bits within 128-bit
// lanes, then two rounds of lane shuffles.
inline void Transpose16(__m512i r[16]) {
  __m512i t[16], u[16];
  for (int k = 0; k < 8; k++) {
    t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  // u[4m + c], lane L: column 4L + c of rows 4m..4m+3.
  for (int m = 0; m < 4; m++) {
    u[4 * m] = _mm512_unpacklo_epi64(t[4 * m], t[4 * m + 2]);
    u[4 * m + 1] = _mm512_unpackhi_epi64(t[4 * m], t[4 * m + 2]);
    u[4 * m + 2] = _mm512_unpacklo_epi64(t[4 * m + 1], t[4 * m + 3]);
    u[4 * m + 3] = _mm512_unpackhi_epi64(t[4 * m + 1], t[4 * m + 3]);
  }
  for (int c = 0; c < 4; c++) {
    const __m512i x0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), x1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
    const __m512i y0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), y1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
    r[c] = _mm512_shuffle_i32x4(x0, y0, 0x88);
    r[4 + c] = _mm512_shuffle_i32x4(x0, y0, 0xdd);
    r[8 + c] = _mm512_shuffle_i32x4(x1, y1, 0x88);
    r[12 + c] = _mm512_shuffle_i32x4(x1, y1, 0xdd);
  }
}

// Up to 16 runs contiguous along k (run i at offset + i * stride; `runs` of them, zeros after) into
// dst[pp * dst_stride + i], writing the words that `keep` selects: 16 runs' words are built as
// rows, then turned into pair rows by one register transpose instead of 16 scattered stores each.
inline void PackRuns(const Bf16Operand& op, int64_t offset, int64_t stride, int runs, int64_t kc, uint32_t* dst,
                     int64_t dst_stride, __mmask16 keep) {
  for (int64_t p = 0; p < kc; p += 32) {
    const int64_t cnt = std::min<int64_t>(32, kc - p);
    __m512i r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) r[i] = i < runs ? RunWords(op, offset + i * stride + p, cnt) : _mm512_setzero_si512();
    Transpose16(r);
    uint32_t* d = dst + (p / 2) * dst_stride;
    const int64_t words = (cnt + 1) / 2;
    for (int64_t t = 0; t < words; t++) _mm512_mask_storeu_epi32(d + t * dst_stride, keep, r[t]);
  }
}

// A KC x NC block of B (kc x nc of it valid) into NR = NV * 16-column slivers of pair words,
// dst[sliver][pp][j] with each sliver kp_rows pair rows long: pairs past kc, and columns past nc,
// are zeros (kp_rows >= (kc + 1) / 2; AMX pads k to whole 32-element tiles).
template <int NV>
void PackBPairs(const Bf16Operand& B, int64_t off, int64_t kc, int64_t nc, uint32_t* dst, int64_t kp_rows) {
  constexpr int NR = NV * 16;
  const int64_t kp = (kc + 1) / 2;
  const auto zero_tail = [&](uint32_t* sliver) { std::memset(sliver + kp * NR, 0, size_t(kp_rows - kp) * NR * 4); };
  if (B.cs == 1) {
    // Row-major: two storage rows at a time across all slivers, so reads run along the rows.
    for (int64_t pp = 0; pp < kp; pp++) {
      const int64_t p = 2 * pp;
      const bool second = p + 1 < kc;
      for (int64_t jr = 0; jr < nc; jr += NR) {
        uint32_t* d = dst + jr * kp_rows + pp * NR;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
          const int64_t cnt = nc - jr - v * 16;
          _mm512_storeu_si512(d + v * 16, PairWords(B, off + p * B.rs + jr + v * 16, B.rs, second, cnt));
        }
      }
    }
    if (kp_rows > kp)
      for (int64_t jr = 0; jr < nc; jr += NR) zero_tail(dst + jr * kp_rows);
    return;
  }
  for (int64_t jr = 0; jr < nc; jr += NR) {
    uint32_t* d = dst + jr * kp_rows;
    const int nr = int(std::min<int64_t>(NR, nc - jr));
    if (kp_rows > kp) zero_tail(d);
    if (B.rs == 1) {
      // Transposed B (x @ w.T): each column runs along k; 16 columns per transpose.
      for (int v = 0; v < NV; v++) {
        const int runs = std::max(0, std::min(16, nr - v * 16));
        PackRuns(B, off + (jr + v * 16) * B.cs, B.cs, runs, kc, d + v * 16, NR, Mask16(16));
      }
      continue;
    }
    for (int j = 0; j < NR; j++) {
      if (j >= nr) {
        for (int64_t pp = 0; pp < kp; pp++) d[pp * NR + j] = 0;
      } else {
        for (int64_t pp = 0; pp < kp; pp++) {
          const int64_t s = off + (jr + j) * B.cs + 2 * pp * B.rs;
          d[pp * NR + j] = ScalarBits(B, s) | (2 * pp + 1 < kc ? ScalarBits(B, s + B.rs) << 16 : 0);
        }
      }
    }
  }
}
