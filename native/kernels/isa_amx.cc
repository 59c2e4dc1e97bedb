// The bfloat16 GEMM on AMX (Intel Sapphire Rapids and later): tdpbf16ps multiplies a 16 x 32
// bfloat16 tile of A by a 32 x 16 tile of B (stored as 16 rows of pair words) into a 16 x 16
// float32 tile of C, 16384 flops per instruction, about 25x what vdpbf16ps does per cycle here.
// bf16_gemm.cc calls in only where AmxBf16Supported(): the CPU has AMX-TILE and AMX-BF16 (and
// AVX512_BF16 for the packing) and Linux granted this process the tile data state.
//
// Tiles: C in tmm0-3 (a 2 x 2 block of 16 x 16, 32 x 32 floats), A in tmm4-5, B in tmm6-7, every
// tile 16 rows of 64 bytes (palette 1). Packed layouts, k padded with zeros to whole 32-element
// tiles and m, n to whole 16s, so every tile load is full:
//   A: [16-row sliver][k tile][row][16 pair words], each tile 1 KiB contiguous;
//   B: [16-column sliver][pair row][16 pair words] (bf16_pack.inl's PackBPairs with NR = 16), so
//      k tile t of a sliver is the 1 KiB at pair row 16 t.
// Numerics as vdpbf16ps: bfloat16 denormals read as zero, products exact, float32 sums in the
// instruction's own order, denormal results flushed to zero.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "bf16_gemm.h"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma GCC push_options
#pragma GCC target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma")
// GCC 12's own intrinsics read an intentionally undefined register (as in isa_avx512.cc).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace rt_amx {
using rt::Bf16GemmProblem;
using rt::Bf16Operand;

#include "bf16_pack.inl"

constexpr int kTileWords = 256;  // 16 rows x 16 pair words: one A, B or C tile

// GCC's tileloadd asm does not say it reads memory: a compiler barrier before a kernel's loads keeps
// the packing's stores ahead of them.
inline void CompilerBarrier() { asm volatile("" ::: "memory"); }

struct alignas(64) TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// The tile shapes are per thread (XSAVE state): each thread that runs a kernel loads them once.
void ConfigureThisThread() {
  thread_local bool configured = false;
  if (configured) return;
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  CompilerBarrier();
  _tile_loadconfig(&cfg);
  configured = true;
}

// Column-major A (a transposed operand: storage rows are k): pair words of 16 rows per pair of k,
// then one register transpose turns 16 pairs x 16 rows into a tile's rows. The slivers are the
// inner loop, so each k row is read along its length (mc contiguous values) before the next: for a
// wide A (the vocabulary-wide head's g.T) the rows are pages apart, and a sliver at a time touched
// every row's page for 64 bytes.
void PackATilesColumnMajor(const Bf16Operand& A, int64_t off, int64_t mc, int64_t kc, int64_t nkt, uint32_t* dst) {
  for (int64_t kt = 0; kt < nkt; kt++)
    for (int64_t ir = 0; ir < mc; ir += 16) {
      const int mr = int(std::min<int64_t>(16, mc - ir));
      __m512i t[16];
#pragma GCC unroll 16
      for (int pp = 0; pp < 16; pp++) {
        const int64_t p = kt * 32 + 2 * pp;
        t[pp] = p < kc ? PairWords(A, off + p * A.cs + ir, A.cs, p + 1 < kc, mr) : _mm512_setzero_si512();
      }
      Transpose16(t);
      uint32_t* d = dst + ((ir / 16) * nkt + kt) * kTileWords;
      for (int r = 0; r < 16; r++) _mm512_storeu_si512(d + r * 16, t[r]);
    }
}

// An MC x KC block of A (mc x kc valid) into 16-row slivers of k tiles: dst[sliver][kt][row][word].
void PackATiles(const Bf16Operand& A, int64_t off, int64_t mc, int64_t kc, int64_t nkt, uint32_t* dst) {
  if (A.rs == 1 && A.cs != 1) return PackATilesColumnMajor(A, off, mc, kc, nkt, dst);
  for (int64_t ir = 0; ir < mc; ir += 16) {
    uint32_t* d = dst + (ir / 16) * nkt * kTileWords;
    const int mr = int(std::min<int64_t>(16, mc - ir));
    if (A.cs == 1) {
      // Row-major: each row's k run is a tile row already, rounded 32 values at a time.
      for (int r = 0; r < 16; r++)
        for (int64_t kt = 0; kt < nkt; kt++) {
          const __m512i w = r < mr ? RunWords(A, off + (ir + r) * A.rs + kt * 32, kc - kt * 32) : _mm512_setzero_si512();
          _mm512_storeu_si512(d + kt * kTileWords + r * 16, w);
        }
    } else {
      for (int r = 0; r < 16; r++)
        for (int64_t pp = 0; pp < nkt * 16; pp++) {
          uint32_t w = 0;
          if (r < mr && 2 * pp < kc) {
            const int64_t s = off + (ir + r) * A.rs + 2 * pp * A.cs;
            w = ScalarBits(A, s) | (2 * pp + 1 < kc ? ScalarBits(A, s + A.cs) << 16 : 0);
          }
          d[(pp / 16) * kTileWords + r * 16 + pp % 16] = w;
        }
    }
  }
}

// A TM x TN block of 16 x 16 C tiles (TM, TN 1 or 2; mr x nr of it valid) over nkt k tiles.
// a: the first row sliver's tiles (the second sa words on), b likewise with sb. C goes straight
// to memory when the block is whole and alpha == 1, beta 0 or 1; else through a float buffer.
template <int TM, int TN>
void Block(int64_t nkt, const uint32_t* a, int64_t sa, const uint32_t* b, int64_t sb, float* c, int64_t ldc, float alpha,
           float beta, int mr, int nr) {
  const bool direct = mr == TM * 16 && nr == TN * 16 && alpha == 1.0f && (beta == 0.0f || beta == 1.0f);
  const int64_t cstride = ldc * 4;
  CompilerBarrier();
  if (direct && beta == 1.0f) {
    _tile_loadd(0, c, cstride);
    if constexpr (TN == 2) _tile_loadd(1, c + 16, cstride);
    if constexpr (TM == 2) _tile_loadd(2, c + 16 * ldc, cstride);
    if constexpr (TM == 2 && TN == 2) _tile_loadd(3, c + 16 * ldc + 16, cstride);
  } else {
    _tile_zero(0);
    if constexpr (TN == 2) _tile_zero(1);
    if constexpr (TM == 2) _tile_zero(2);
    if constexpr (TM == 2 && TN == 2) _tile_zero(3);
  }
  for (int64_t kt = 0; kt < nkt; kt++) {
    const uint32_t* at = a + kt * kTileWords;
    const uint32_t* bt = b + kt * kTileWords;
    _tile_loadd(4, at, 64);
    _tile_loadd(6, bt, 64);
    if constexpr (TN == 2) _tile_loadd(7, bt + sb, 64);
    if constexpr (TM == 2) _tile_loadd(5, at + sa, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (TN == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (TM == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (TM == 2 && TN == 2) _tile_dpbf16ps(3, 5, 7);
  }
  if (direct) {
    _tile_stored(0, c, cstride);
    if constexpr (TN == 2) _tile_stored(1, c + 16, cstride);
    if constexpr (TM == 2) _tile_stored(2, c + 16 * ldc, cstride);
    if constexpr (TM == 2 && TN == 2) _tile_stored(3, c + 16 * ldc + 16, cstride);
    return;
  }
  alignas(64) float buf[4][kTileWords];
  _tile_stored(0, buf[0], 64);
  if constexpr (TN == 2) _tile_stored(1, buf[1], 64);
  if constexpr (TM == 2) _tile_stored(2, buf[2], 64);
  if constexpr (TM == 2 && TN == 2) _tile_stored(3, buf[3], 64);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < TM; i++) {
    const int rows = std::min(16, mr - i * 16);
    for (int j = 0; j < TN; j++) {
      const __mmask16 m = Mask16(nr - j * 16);
      const float* t = buf[i * 2 + j];
      for (int r = 0; r < rows; r++) {
        float* cr = c + (i * 16 + r) * ldc + j * 16;
        __m512 v = _mm512_mul_ps(va, _mm512_load_ps(t + r * 16));
        // beta == 0 overwrites whatever was there, NaN included.
        if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, cr), v);
        _mm512_mask_storeu_ps(cr, m, v);
      }
    }
  }
}

// An mc x nc block of C from packed A (pa: 16-row slivers) and packed B (pb: 16-column slivers),
// each sliver `sliver` words. Across C's rows, 32 at a time, each sweeping the nc columns: a
// 32-row strip of C is few pages however wide C is (a vocabulary-wide head's rows are 32 KiB apart,
// and stepping down the rows instead missed the TLB on every tile row).
inline void SweepBlocks(int64_t nkt, const uint32_t* pa, const uint32_t* pb, int64_t sliver, int64_t mc, int64_t nc,
                        float* c0, int64_t ldc, float alpha, float beta) {
  for (int64_t ir = 0; ir < mc; ir += 32) {
    const int mr = int(std::min<int64_t>(32, mc - ir));
    const uint32_t* a = pa + (ir / 16) * sliver;
    for (int64_t jr = 0; jr < nc; jr += 32) {
      const int nr = int(std::min<int64_t>(32, nc - jr));
      const uint32_t* b = pb + (jr / 16) * sliver;
      float* c = c0 + ir * ldc + jr;
      if (mr > 16) {
        if (nr > 16) Block<2, 2>(nkt, a, sliver, b, sliver, c, ldc, alpha, beta, mr, nr);
        else Block<2, 1>(nkt, a, sliver, b, sliver, c, ldc, alpha, beta, mr, nr);
      } else {
        if (nr > 16) Block<1, 2>(nkt, a, sliver, b, sliver, c, ldc, alpha, beta, mr, nr);
        else Block<1, 1>(nkt, a, sliver, b, sliver, c, ldc, alpha, beta, mr, nr);
      }
    }
  }
}

// run()'s part timer: nothing (gemm_tune.cc's amx-parts passes one that counts ticks).
struct NoPartTimer {
  void mark() {}
  void lap(int) {}
};

template <int MC, int KC, int NC>
struct Gemm {
  static_assert(MC % 32 == 0 && NC % 32 == 0 && KC % 32 == 0, "blocks must hold whole 2 x 2 tile blocks");

  struct Buffer {
    uint32_t* p = nullptr;
    size_t have = 0;
    ~Buffer() { std::free(p); }
    uint32_t* get(size_t words) {
      if (words > have) {
        std::free(p);
        p = static_cast<uint32_t*>(std::aligned_alloc(64, (words * 4 + 63) / 64 * 64));
        have = words;
      }
      return p;
    }
  };

  // Packed A up to this size is kept for all of C's columns (below).
  static constexpr size_t kWholeAWords = size_t(1) << 18;  // 1 MiB: half of L2, beside B's panel

  static void run(const Bf16GemmProblem& g) {
    NoPartTimer none;
    run_timed(g, none);
  }

  // run()'s loops, telling `timer` where packing B (part 0), packing A (1) and the tile loop (2)
  // end: bench/native/gemm_tune.cc's amx-parts counts ticks there, the addon's run() nothing.
  template <class PartTimer>
  static void run_timed(const Bf16GemmProblem& g, PartTimer& timer) {
    static thread_local Buffer abuf, bbuf;
    // One k block and C wider than NC (the vocabulary-wide head's x @ w.T): A is packed once, all
    // of it, and read by every NC columns, where it used to be packed (rounded from float32) again
    // for each of them.
    const int64_t m16 = (g.m + 15) / 16 * 16, k32 = (g.k + 31) / 32 * 32;
    const bool whole_a = g.n > NC && g.k <= KC && size_t(m16 * k32 / 2) <= kWholeAWords;
    uint32_t* pa = abuf.get(whole_a ? size_t(m16 * k32 / 2) : size_t(MC) * (KC / 2));
    uint32_t* pb = bbuf.get(size_t(KC / 2) * NC);
    ConfigureThisThread();
    for (int64_t jc = 0; jc < g.n; jc += NC) {
      const int64_t nc = std::min<int64_t>(NC, g.n - jc);
      for (int64_t pc = 0; pc < g.k; pc += KC) {
        const int64_t kc = std::min<int64_t>(KC, g.k - pc), nkt = (kc + 31) / 32, sliver = nkt * kTileWords;
        // Later k blocks add to what the first left.
        const float beta = pc == 0 ? g.beta : 1.0f;
        timer.mark();
        PackBPairs<1>(g.b, pc * g.b.rs + jc * g.b.cs, kc, nc, pb, nkt * 16);
        timer.lap(0);
        for (int64_t ic = 0; ic < g.m; ic += MC) {
          const int64_t mc = std::min<int64_t>(MC, g.m - ic);
          uint32_t* pa_block = whole_a ? pa + (ic / 16) * sliver : pa;
          if (!whole_a || jc == 0) PackATiles(g.a, ic * g.a.rs + pc * g.a.cs, mc, kc, nkt, pa_block);
          timer.lap(1);
          SweepBlocks(nkt, pa_block, pb, sliver, mc, nc, g.c + ic * g.ldc + jc, g.ldc, g.alpha, beta);
          timer.lap(2);
        }
      }
    }
  }
};

// Measured on a loaded 2-core Sapphire Rapids VM (bench/native/gemm_tune.cc amx) over the GPT's
// shapes: a wide NC matters most, as A (rounded from float32 while packed) is packed again for
// every NC columns; KC = 512 keeps a 32-row strip of A (32 KiB) in L1 while a row of blocks sweeps
// the B block (KC x NC, 1 MiB, in the 2 MiB L2).
using GemmAmx = Gemm<128, 512, 1024>;

// CPUID leaf 7: EDX bit 24 AMX-TILE, bit 22 AMX-BF16 (GCC 12 has no __builtin_cpu_supports name
// for them); then Linux must grant the tile data state (XFEATURE_XTILEDATA) to this process.
bool DetectAmx() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  if (!(edx & (1u << 24)) || !(edx & (1u << 22))) return false;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512bf16"))
    return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
}  // namespace rt_amx
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace rt {
bool AmxBf16Supported() {
  static std::once_flag once;
  static bool supported = false;
  std::call_once(once, [] { supported = rt_amx::DetectAmx(); });
  return supported;
}
Bf16GemmFn AmxBf16Gemm() { return &rt_amx::GemmAmx::run; }
int AmxBf16TileRows() { return 32; }
int AmxBf16TileCols() { return 32; }
}  // namespace rt
#else
namespace rt {
bool AmxBf16Supported() { return false; }
Bf16GemmFn AmxBf16Gemm() { return nullptr; }
int AmxBf16TileRows() { return 1; }
int AmxBf16TileCols() { return 1; }
}  // namespace rt
#endif
