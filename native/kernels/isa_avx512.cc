// The kernels compiled for AVX-512F: the same templates as isa_avx2.cc with 16-lane vectors and
// 12x32 GEMM micro-tiles (24 of the 32 zmm registers accumulate). dispatch.cc selects this table
// only where the CPU and OS support AVX-512F.
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
#pragma GCC target("avx512f,avx2,fma")
// GCC 12's own _mm512_reduce_add_* read an intentionally undefined register; lambdas returning
// vectors are all inlined here, so GCC's note about their ABI doesn't apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace rt_avx512 {
using namespace rt;
#include "simd_avx512.h"
#include "isa_kernels.inl"

// Few rows against a transposed B (x @ w.T with at most MC rows) take K in passes of up to 1024,
// as on AVX2: on a Zen 4 core 4-9% faster than passes of 256 on 16-144 rows with K 300-3072
// (fc1 64x1024x784 92 -> 99-102 GFLOPS, fc2 64x1024x1024 87 -> 91-92) in alternating runs, thread
// CPU time. Few rows against a row-major B packed in chunks (NCF 256) measured -5..+3%: not taken.
// Small row-major A read in place (AInPlace, gemm.inl's run_a_in_place; B too where its rows are
// close): attention's products in gemm_vs_openblas, alternated, p @ v 1.01-1.03x -> 1.19-1.20x
// OpenBLAS and q @ k.T 1.17x -> 1.20-1.24x; in bench/gemm.ts at 1 thread p @ v 71-83 -> 90-104
// GFLOPS. Not for float64 (not measured). A column-major A read in place too (AColsInPlace: a
// weight's gradient g.T @ x with at most 8 slivers of columns; gemm.inl says what it measured).
using GemmF32 = Gemm<F32, 12, 2, 144, 256, 4064, 1024, 0, true, kColsAndBInPlace>;
using GemmF64 = Gemm<F64, 12, 2, 96, 256, 2032>;
}  // namespace rt_avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace rt {
static constexpr KernelTable kAvx512 = {RT_ISA_NAME, rt_avx512::MakeKernels<rt_avx512::F32, rt_avx512::GemmF32>(),
                                        rt_avx512::MakeKernels<rt_avx512::F64, rt_avx512::GemmF64>()};
const KernelTable* Avx512Kernels() { return &kAvx512; }
}  // namespace rt
#else
namespace rt {
const KernelTable* Avx512Kernels() { return nullptr; }
}  // namespace rt
#endif
