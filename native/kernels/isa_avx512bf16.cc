// The bfloat16 GEMM on AVX512_BF16: vdpbf16ps multiplies pairs of bfloat16 values and adds both
// products into one float32 lane, so a 512-bit instruction does 32 multiply-adds, twice the float32
// FMA. bf16_gemm.cc calls in only where the CPU has AVX512_BF16 (and AVX-512BW/VL for the loads).
//
// The loop nest and blocking follow gemm.inl. What differs is the packed layout: the instruction
// pairs consecutive k, so both operands are packed as 32-bit words holding (x[k], x[k+1]) in bf16,
// k padded to even with a zero. A sliver: A as MR words per pair of k, B as NR words per pair of k.
// Float32 operands are rounded to bfloat16 (nearest even, NaN kept quiet) while they are packed,
// by vcvtne2ps2bf16 where they run along a unit stride.
// The instruction treats bfloat16 denormals as zero; normal values give the exact products, summed
// in float32 in pairs.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "bf16_gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma")
// GCC 12's own intrinsics read an intentionally undefined register (as in isa_avx512.cc).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace rt_avx512bf16 {
using rt::Bf16GemmProblem;
using rt::Bf16Operand;

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

template <int MR, int NV, int MC, int KC, int NC>
struct Gemm {
  static constexpr int NR = NV * 16;
  static_assert(KC % 2 == 0 && MC % MR == 0 && NC % NR == 0 && MR <= 16, "blocks must hold whole micro-tiles");

  struct Buffer {
    uint32_t* p = nullptr;
    ~Buffer() { std::free(p); }
    uint32_t* get(size_t n) {
      if (!p) p = static_cast<uint32_t*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64));
      return p;
    }
  };

  static void run(const Bf16GemmProblem& g) {
    static thread_local Buffer abuf, bbuf;
    uint32_t* pa = abuf.get(size_t(MC) * (KC / 2));
    uint32_t* pb = bbuf.get(size_t(KC / 2) * NC);
    for (int64_t jc = 0; jc < g.n; jc += NC) {
      const int64_t nc = std::min<int64_t>(NC, g.n - jc);
      for (int64_t pc = 0; pc < g.k; pc += KC) {
        const int64_t kc = std::min<int64_t>(KC, g.k - pc), kp = (kc + 1) / 2;
        const float beta = pc == 0 ? g.beta : 1.0f;
        pack_b(g.b, pc * g.b.rs + jc * g.b.cs, kc, nc, pb);
        for (int64_t ic = 0; ic < g.m; ic += MC) {
          const int64_t mc = std::min<int64_t>(MC, g.m - ic);
          pack_a(g.a, ic * g.a.rs + pc * g.a.cs, mc, kc, pa);
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const int nr = int(std::min<int64_t>(NR, nc - jr));
            for (int64_t ir = 0; ir < mc; ir += MR) {
              const int mr = int(std::min<int64_t>(MR, mc - ir));
              tile<MR>(kp, pa + ir * kp, pb + jr * kp, g.c + (ic + ir) * g.ldc + jc + jr, g.ldc, g.alpha, beta, mr, nr);
            }
          }
        }
      }
    }
  }

  // KC x NC block of B into NR-column slivers of pair words: dst[sliver][pp][j].
  static void pack_b(const Bf16Operand& B, int64_t off, int64_t kc, int64_t nc, uint32_t* dst) {
    const int64_t kp = (kc + 1) / 2;
    if (B.cs == 1) {
      // Row-major: two storage rows at a time across all slivers, so reads run along the rows.
      for (int64_t pp = 0; pp < kp; pp++) {
        const int64_t p = 2 * pp;
        const bool second = p + 1 < kc;
        for (int64_t jr = 0; jr < nc; jr += NR) {
          uint32_t* d = dst + jr * kp + pp * NR;
#pragma GCC unroll 4
          for (int v = 0; v < NV; v++) {
            const int64_t cnt = nc - jr - v * 16;
            _mm512_storeu_si512(d + v * 16, PairWords(B, off + p * B.rs + jr + v * 16, B.rs, second, cnt));
          }
        }
      }
      return;
    }
    for (int64_t jr = 0; jr < nc; jr += NR) {
      uint32_t* d = dst + jr * kp;
      const int nr = int(std::min<int64_t>(NR, nc - jr));
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

  // MC x KC block of A into MR-row slivers of pair words: dst[sliver][pp][r].
  static void pack_a(const Bf16Operand& A, int64_t off, int64_t mc, int64_t kc, uint32_t* dst) {
    const int64_t kp = (kc + 1) / 2;
    if (A.rs == 1 && A.cs != 1) {
      // Column-major (a transposed operand): storage rows are k, so pair two of them.
      for (int64_t pp = 0; pp < kp; pp++) {
        const int64_t p = 2 * pp;
        const bool second = p + 1 < kc;
        for (int64_t ir = 0; ir < mc; ir += MR) {
          const int64_t cnt = std::min<int64_t>(MR, mc - ir);
          _mm512_mask_storeu_epi32(dst + ir * kp + pp * MR, Mask16(MR), PairWords(A, off + p * A.cs + ir, A.cs, second, cnt));
        }
      }
      return;
    }
    for (int64_t ir = 0; ir < mc; ir += MR) {
      uint32_t* d = dst + ir * kp;
      const int mr = int(std::min<int64_t>(MR, mc - ir));
      if (A.cs == 1) {
        // Row-major A: its rows run along k, all MR of a sliver in one transpose.
        PackRuns(A, off + ir * A.rs, A.rs, mr, kc, d, MR, Mask16(MR));
        continue;
      }
      for (int r = 0; r < MR; r++) {
        if (r >= mr) {
          for (int64_t pp = 0; pp < kp; pp++) d[pp * MR + r] = 0;
        } else {
          for (int64_t pp = 0; pp < kp; pp++) {
            const int64_t s = off + (ir + r) * A.rs + 2 * pp * A.cs;
            d[pp * MR + r] = ScalarBits(A, s) | (2 * pp + 1 < kc ? ScalarBits(A, s + A.cs) << 16 : 0);
          }
        }
      }
    }
  }

  template <int R>
  static void tile(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha, float beta,
                   int mr, int nr) {
    if constexpr (R > 1) {
      if (mr < R) return tile<R - 1>(kp, a, b, c, ldc, alpha, beta, mr, nr);
    }
    if constexpr (NV > 1) {
      if (nr <= (NV - 1) * 16) return kernel<R, NV - 1>(kp, a, b, c, ldc, alpha, beta, nr);
    }
    kernel<R, NV>(kp, a, b, c, ldc, alpha, beta, nr);
  }

  template <int R, int NVe>
  static void kernel(int64_t kp, const uint32_t* __restrict a, const uint32_t* __restrict b, float* __restrict c,
                     int64_t ldc, float alpha, float beta, int nr) {
    __m512 acc[R][NVe];
#pragma GCC unroll 16
    for (int i = 0; i < R; i++)
#pragma GCC unroll 4
      for (int j = 0; j < NVe; j++) acc[i][j] = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int64_t pp = 0; pp < kp; pp++) {
      __m512bh bv[NVe];
#pragma GCC unroll 4
      for (int j = 0; j < NVe; j++) bv[j] = (__m512bh)_mm512_loadu_si512(b + j * 16);
#pragma GCC unroll 16
      for (int i = 0; i < R; i++) {
        const __m512bh ai = (__m512bh)_mm512_set1_epi32(int(a[i]));
#pragma GCC unroll 4
        for (int j = 0; j < NVe; j++) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], ai, bv[j]);
      }
      a += MR;
      b += NR;
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < R; i++)
#pragma GCC unroll 4
      for (int j = 0; j < NVe; j++) {
        float* cij = c + i * ldc + j * 16;
        const __mmask16 m = Mask16(nr - j * 16);
        __m512 v = _mm512_mul_ps(va, acc[i][j]);
        // beta == 0 overwrites whatever was there, NaN included.
        if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, cij), v);
        _mm512_mask_storeu_ps(cij, m, v);
      }
  }
};

// 12 x 32 tiles: 24 of the 32 zmm registers accumulate. A KC/2 x NR sliver of B is 32 KiB of pair
// words, the same bytes as the float32 GEMM's; an MC x KC block of A is 144 KiB (inside L2).
using GemmBf16 = Gemm<12, 2, 144, 512, 4096>;
}  // namespace rt_avx512bf16
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace rt {
Bf16GemmFn Avx512Bf16Gemm() { return &rt_avx512bf16::GemmBf16::run; }
int Avx512Bf16TileRows() { return 12; }
int Avx512Bf16TileCols() { return rt_avx512bf16::GemmBf16::NR; }
}  // namespace rt
#else
namespace rt {
Bf16GemmFn Avx512Bf16Gemm() { return nullptr; }
int Avx512Bf16TileRows() { return 1; }
int Avx512Bf16TileCols() { return 1; }
}  // namespace rt
#endif
