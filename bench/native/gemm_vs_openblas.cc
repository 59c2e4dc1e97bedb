// The AVX-512 float32 GEMM (native/kernels/gemm.inl at the addon's tile and blocks) beside OpenBLAS's
// cblas_sgemm in one process, one thread, on the squares and the MLP/attention shapes of
// bench/gemm.ts, and each side's share of this core's float32 FMA peak (fma_peak.h, measured first:
// a side near it cannot be beaten by much). The two take turns: 21 pairs of runs of ~25 ms each, timed on this thread's CPU
// clock, so that other jobs on a shared machine (which preempt and slow both alike) move the
// pairwise ratio far less than they move either figure. Prints per shape the median GFLOPS of each
// and the median of the per-pair ratios ours / OpenBLAS.
//
// Built without -static (it dlopens the library); numpy's wheel bundles an OpenBLAS with 64-bit
// integers and prefixed names (scipy_cblas_sgemm64_), a system one has cblas_sgemm:
//
//   g++ -O3 -std=c++17 -pthread -Inative/kernels bench/native/gemm_vs_openblas.cc native/kernels/pack_buffer.cc -ldl -o /tmp/gemm_vs_openblas
//   /tmp/gemm_vs_openblas "$(ls ~/.venvs/peer/lib/python3*/site-packages/numpy.libs/libscipy_openblas*.so)" [g.T@x]
//
// A second argument keeps only the shapes whose name holds it.
//
// With -DOURS_AVX2 it times the AVX2 kernels instead; on an AVX-512 machine run it with
// OPENBLAS_CORETYPE=Haswell so that OpenBLAS uses its AVX2 kernels too (on an AVX2-only machine
// OpenBLAS picks them itself).
#include <dlfcn.h>
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "fma_peak.h"
#include "gemm_shapes.h"

#include "kernel_table.h"
#include "pack_buffer.h"

#pragma GCC push_options
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// As in isa_avx512.cc: GCC 12's AVX-512 intrinsics read an intentionally undefined register.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace ours {
using namespace rt;
#ifdef OURS_AVX2
// The AVX2 kernels (-DOURS_AVX2), to hold against OpenBLAS's Haswell kernels (OPENBLAS_CORETYPE=Haswell).
#pragma GCC target("avx2,fma")
#include "simd_avx2.h"
#include "gemm.inl"
// Keep in step with native/kernels/isa_avx2.cc's GemmF32.
using G = Gemm<F32, 6, 2, 144, 384, 4080, 1024, 256, true, kColsPackedB>;
#else
#pragma GCC target("avx512f,avx2,fma")
#include "simd_avx512.h"
#include "gemm.inl"
// Keep in step with native/kernels/isa_avx512.cc's GemmF32.
using G = Gemm<F32, 12, 2, 144, 256, 4064, 1024, 0, true, kColsAndBInPlace>;
#endif
}  // namespace ours
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace {

using Shape = GemmShape;
const auto& kShapes = kGemmShapes;

// cblas_sgemm with 32-bit (system OpenBLAS) or 64-bit (numpy's scipy-openblas) integers.
using Sgemm32 = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Sgemm64 = void (*)(int, int, int, long, long, long, float, const float*, long, const float*, long, float, float*, long);
Sgemm32 sgemm32;
Sgemm64 sgemm64;

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// C[m,n] = A B for one matrix of the shape (A stored k x m when transA, B n x k when transB).
void Theirs(const Shape& s, const float* a, const float* b, float* c) {
  const int ta = s.transA ? kTrans : kNoTrans, tb = s.transB ? kTrans : kNoTrans;
  const int64_t lda = s.transA ? s.m : s.k, ldb = s.transB ? s.k : s.n;
  if (sgemm64) sgemm64(kRowMajor, ta, tb, s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n);
  else sgemm32(kRowMajor, ta, tb, int(s.m), int(s.n), int(s.k), 1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(s.n));
}

void Ours(const Shape& s, const float* a, const float* b, float* c) {
  rt::GemmProblem<float> g{s.m, s.n, s.k, a, s.transA ? 1 : s.k, s.transA ? s.m : 1, b, s.transB ? 1 : s.n, s.transB ? s.k : 1,
                           c, s.n, 1.0f, 0.0f};
  ours::G::run(g);
}

double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Largest |ours - OpenBLAS| over sum |A||B| on the shape: both must compute the same product.
double Disagreement(const Shape& s, const float* a, const float* b) {
  std::vector<float> c0(s.m * s.n), c1(s.m * s.n);
  Ours(s, a, b, c0.data());
  Theirs(s, a, b, c1.data());
  double worst = 0;
  for (int64_t i = 0; i < s.m * s.n; i++) worst = std::max(worst, double(std::fabs(c0[i] - c1[i])));
  return worst / double(s.k);  // |a|, |b| <= 1
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s /path/to/libopenblas.so [part of a shape's name, e.g. g.T@x]\n", argv[0]);
    return 2;
  }
#ifdef OURS_AVX2
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::printf("this CPU has no AVX2+FMA: nothing to compare\n");
    return 0;
  }
#else
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("this CPU has no AVX-512F: nothing to compare (build with -DOURS_AVX2 for the AVX2 kernels)\n");
    return 0;
  }
#endif
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  sgemm64 = reinterpret_cast<Sgemm64>(dlsym(lib, "scipy_cblas_sgemm64_"));
  if (!sgemm64) sgemm32 = reinterpret_cast<Sgemm32>(dlsym(lib, "cblas_sgemm"));
  auto threads = reinterpret_cast<void (*)(long)>(dlsym(lib, sgemm64 ? "scipy_openblas_set_num_threads64_" : "openblas_set_num_threads"));
  auto core = reinterpret_cast<const char* (*)()>(dlsym(lib, sgemm64 ? "scipy_openblas_get_corename64_" : "openblas_get_corename"));
  if (!sgemm64 && !sgemm32) {
    std::fprintf(stderr, "%s has no cblas_sgemm\n", argv[1]);
    return 1;
  }
  if (threads) threads(1);
  const double peak = fma_peak::PeakGflops();
  std::printf("OpenBLAS kernels: %s; one thread; GFLOPS medians of 21 alternating runs (thread CPU time)\n", core ? core() : "?");
  std::printf("this core's float32 FMA peak (fma_peak.h): %.1f GFLOPS; %% = share of it\n", peak);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Shape& s : kShapes) {
    if (argc > 2 && !std::strstr(s.name, argv[2])) continue;  // a filter: only shapes whose name holds it
    std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    auto all = [&](void (*f)(const Shape&, const float*, const float*, float*)) {
      for (int64_t i = 0; i < s.batch; i++) f(s, a.data() + i * s.m * s.k, b.data() + i * s.k * s.n, c.data() + i * s.m * s.n);
    };
    const double flop = 2.0 * s.batch * s.m * s.n * s.k;
    const int reps = std::max(1, int(0.025 / (flop / 130e9)));
    for (int w = 0; w < 2; w++) all(Ours), all(Theirs);
    std::vector<double> mine, theirs, ratio;
    for (int r = 0; r < 21; r++) {
      double t0 = ThreadSeconds();
      for (int i = 0; i < reps; i++) all(Ours);
      const double t_ours = ThreadSeconds() - t0;
      t0 = ThreadSeconds();
      for (int i = 0; i < reps; i++) all(Theirs);
      const double t_theirs = ThreadSeconds() - t0;
      mine.push_back(flop * reps / t_ours / 1e9);
      theirs.push_back(flop * reps / t_theirs / 1e9);
      ratio.push_back(t_theirs / t_ours);
    }
    std::printf("%-28s ours %6.1f (%3.0f%%)  openblas %6.1f (%3.0f%%)  ours/openblas %.3f  (|diff|/k %.1e)\n", s.name,
                Median(mine), 100 * Median(mine) / peak, Median(theirs), 100 * Median(theirs) / peak, Median(ratio),
                Disagreement(s, a.data(), b.data()));
    std::fflush(stdout);
  }
  return 0;
}
