// The kernels compiled for AVX2+FMA. Only dispatch.cc decides whether they may run; nothing here
// executes at load time (the table below is constant-initialised outside the target region).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernel_table.h"
#include "pack_buffer.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace rt_avx2 {
using namespace rt;
#include "simd_avx2.h"
#include "isa_kernels.inl"

// 6x16 float micro-tiles (12 of the 16 ymm registers accumulate). KC = 384: a KC x NR sliver of B
// is 24 KiB of Zen 3's 32 KiB L1d and MC x KC of A 216 KiB of its 512 KiB L2; on Zen 3 it measured
// 2-10% above KC = 256 at 512-2048 and on the MLP's 64-row products (fewer passes over C), while
// 4x24 tiles, MC 72-288 and KC 192 or 512 measured no better. The few-rows path (x @ w.T with
// at most MC rows) takes K in passes of up to 1024: 1-15% faster than 384 on 64-144 rows with K
// 768-4096 in interleaved runs (2048 measured the same as 1024). Few rows against a row-major B
// (g @ w) pack B 256 columns at a time with the next chunk prefetched under the tiles: 0-15%
// (median 3%, more when the shared L3 is busy) faster than the blocked loop on 64 x 784 x 1024 and
// 64 x 1024 x 1024, 1.2-1.6x on 16-32 rows against 2048-4096 columns, in interleaved
// single-thread runs (128 columns measured 0-3%). A row-major A read in place where N fits 4 (now 8)
// slivers (gemm.inl's run_a_in_place; session 19, on a Zen 4 core's AVX2 path, paired with
// OpenBLAS in bench/native/gemm_vs_openblas.cc built with this configuration, two alternated pairs):
// attention's q @ k.T 1.21-1.22x -> 1.23-1.24x OpenBLAS, p @ v 1.01-1.07x -> 1.07-1.10x, a
// 16-output classifier's x @ w.T 1.02-1.04x -> 1.33-1.36x. Not measured on AVX2-only hardware.
// A column-major A (a weight's gradient g.T @ x, at most 8 slivers of columns) read in place with
// B packed and K in passes of KC (kColsPackedB). AVX-512's way, B in place too and passes up to
// 1024, measured worse here (session 20, a Zen 4 core's AVX2 path against OpenBLAS's Haswell
// kernels: 1024 x 64 x 1024 0.92-0.94 -> 0.64x; session 21 on an AVX2-only Zen 4 VM, 2048 x 64 x
// 1024 0.62-0.67x): its 6 x 16 tile does a quarter of the arithmetic per line of A that it streams,
// so a tile's passes must keep that stream and the B sliver in L1 for the row's other slivers.
// Session 21, AVX2-only VM, gemm_vs_openblas -DOURS_AVX2 (OpenBLAS 0.3.31's Haswell kernels), two
// alternated runs each: passes of 384 with B packed took 192 x 64 x 1024 and 64 x 64 x 1024 from
// 0.87-0.89 to 1.06-1.07x, 100 x 50 x 700 0.76 -> 0.93-0.94x, attention's dV 0.82-0.91 -> 1.06-1.10x;
// 128-256 or 512 deep measured 1-3% lower or level, B in place 5-10% lower, and 16 slivers of
// columns (the GPT's 256) 0.96 -> 0.72x on its head's 8192 x 256 x 1024, so 8 as on AVX-512.
// Against the blocked loop on more rows (two runs): 320-1000 x 64 x 1024 0.85-0.89 -> 1.01-1.07x,
// x 128 0.91-0.94 -> 0.98-1.02x; not where A's columns are a multiple of 4 KiB apart (gemm.inl).
using GemmF32 = Gemm<F32, 6, 2, 144, 384, 4080, 1024, 256, true, kColsPackedB>;
using GemmF64 = Gemm<F64, 6, 2, 96, 256, 2040>;
}  // namespace rt_avx2
#pragma GCC pop_options

namespace rt {
static constexpr KernelTable kAvx2 = {RT_ISA_NAME, rt_avx2::MakeKernels<rt_avx2::F32, rt_avx2::GemmF32>(),
                                      rt_avx2::MakeKernels<rt_avx2::F64, rt_avx2::GemmF64>()};
const KernelTable* Avx2Kernels() { return &kAvx2; }
}  // namespace rt
#else
namespace rt {
const KernelTable* Avx2Kernels() { return nullptr; }
}  // namespace rt
#endif
