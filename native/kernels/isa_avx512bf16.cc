// The bfloat16 GEMM on AVX512_BF16: vdpbf16ps multiplies pairs of bfloat16 values and adds both
// products into one float32 lane, so a 512-bit instruction does 32 multiply-adds, twice the float32
// FMA. bf16_gemm.cc calls in only where the CPU has AVX512_BF16 (and AVX-512BW/VL for the loads).
//
// The loop nest and blocking follow gemm.inl. What differs is the packed layout: the instruction
// pairs consecutive k, so both operands are packed as 32-bit words holding (x[k], x[k+1]) in bf16,
// k padded to even with a zero. A sliver: A as MR words per pair of k, B as NR words per pair of k.
// Float32 operands are rounded to bfloat16 (nearest even, NaN kept quiet) while they are packed,
// by vcvtne2ps2bf16 where they run along a unit stride (bf16_pack.inl, shared with isa_amx.cc).
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

#include "bf16_pack.inl"

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
        PackBPairs<NV>(g.b, pc * g.b.rs + jc * g.b.cs, kc, nc, pb, kp);
        for (int64_t ic = 0; ic < g.m; ic += MC) {
          const int64_t mc = std::min<int64_t>(MC, g.m - ic);
          pack_a(g.a, ic * g.a.rs + pc * g.a.cs, mc, kc, pa);
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const int nr = int(std::min<int64_t>(NR, nc - jr));
            for (int64_t ir = 0; ir < mc; ir += MR) {
              const int mr = int(std::min<int64_t>(MR, mc - ir));
              float* c = g.c + (ic + ir) * g.ldc + jc + jr;
              if (rows_alias(g.ldc)) tile_in_halves(kp, pa + ir * kp, pb + jr * kp, c, g.ldc, g.alpha, beta, mr, nr);
              else tile<MR>(kp, pa + ir * kp, pb + jr * kp, c, g.ldc, g.alpha, beta, mr, nr);
            }
          }
        }
      }
    }
  }

  // Whether C's rows are a multiple of 4 KiB apart (the GPT's 1024- and 8192-wide outputs): a
  // tile's 12 rows then put their lines in the same L1 sets, more than the sets' 8 ways, and the
  // lines prefetched at the tile's start evict each other before its write-back. Such tiles run as
  // two of 6 rows over the same packed sliver (as gemm.inl's rows_alias): on a Zen 4 core,
  // 1024 x 8192 x 256 x @ w.T 165-180 -> 178-196 GFLOPS, 1024 x 1024 x 256 1-4% faster.
  static bool rows_alias(int64_t ldc) { return MR > 8 && ldc * int64_t(sizeof(float)) % 4096 == 0; }

  // An MR-row tile as two of MR / 2 rows over the same packed sliver (MR words per pair of k).
  static void tile_in_halves(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha,
                             float beta, int mr, int nr) {
    constexpr int H = MR / 2;
    tile<H>(kp, a, b, c, ldc, alpha, beta, std::min(mr, H), nr);
    if (mr > H) tile<MR - H>(kp, a + H, b, c + H * ldc, ldc, alpha, beta, mr - H, nr);
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
    // C's lines, wanted at the end, are fetched while the products run (1-3% on every shape here).
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + NVe * 16 - 1), _MM_HINT_T0);
    }
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
