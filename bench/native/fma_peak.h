// This core's float32 FMA throughput, measured: independent chains of vfmadd on zmm (16 lanes) and
// ymm (8 lanes) registers, timed on the calling thread's CPU clock (so a job that preempts it
// doesn't count). It is the ceiling any float32 GEMM can reach here, which the GEMM tools print
// beside their GFLOPS: a peer already at 85% of it leaves no room for 1.2x. Zen 4 executes a zmm
// FMA as two 256-bit halves, so both widths should read the same; Intel cores with two 512-bit
// FMA units read about twice as much on zmm.
#pragma once
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <vector>

namespace fma_peak {

inline double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// 12 chains: enough to cover a 4-cycle FMA latency on two pipes with room to spare. x * 1 + 0 keeps
// the values finite and normal however long it runs; `volatile` keeps the compiler from folding it.
#define FMA_PEAK_CHAINS(V, SET1, FMADD, ADD, NLANES)                                                   \
  volatile float one_v = 1.0f, zero_v = 0.0f;                                                         \
  const V m = SET1(one_v), z = SET1(zero_v);                                                          \
  V c0 = SET1(1.f), c1 = SET1(2.f), c2 = SET1(3.f), c3 = SET1(4.f), c4 = SET1(5.f), c5 = SET1(6.f);    \
  V c6 = SET1(7.f), c7 = SET1(8.f), c8 = SET1(9.f), c9 = SET1(10.f), c10 = SET1(11.f), c11 = SET1(12.f); \
  for (long i = 0; i < iters; i++) {                                                                  \
    c0 = FMADD(c0, m, z), c1 = FMADD(c1, m, z), c2 = FMADD(c2, m, z), c3 = FMADD(c3, m, z);           \
    c4 = FMADD(c4, m, z), c5 = FMADD(c5, m, z), c6 = FMADD(c6, m, z), c7 = FMADD(c7, m, z);           \
    c8 = FMADD(c8, m, z), c9 = FMADD(c9, m, z), c10 = FMADD(c10, m, z), c11 = FMADD(c11, m, z);       \
    __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5));                \
    __asm__ volatile("" : "+v"(c6), "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));              \
  }                                                                                                   \
  V s = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7)));                           \
  s = ADD(s, ADD(ADD(c8, c9), ADD(c10, c11)));                                                        \
  alignas(64) float out[NLANES];                                                                      \
  std::copy_n(reinterpret_cast<const float*>(&s), NLANES, out);                                       \
  return 2.0 * 12 * NLANES * double(iters) + out[0] * 0;

// Each returns the floating-point operations it did (2 per lane per FMA).
__attribute__((target("avx512f"))) inline double ZmmChains(long iters) {
  FMA_PEAK_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16)
}
__attribute__((target("avx2,fma"))) inline double YmmChains(long iters) {
  FMA_PEAK_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8)
}
#undef FMA_PEAK_CHAINS

// GFLOPS of `chains` on this thread: the best of `runs` runs of ~10 ms of CPU time each (the best,
// not the median: nothing makes a run faster than the core, while preemption's cache and
// frequency effects only make it slower).
inline double Measure(double (*chains)(long), int runs = 15) {
  chains(1 << 16);  // warm-up: wakes the vector unit (and its clock) before timing
  double best = 0;
  for (int r = 0; r < runs; r++) {
    const double t0 = ThreadSeconds();
    const double flop = chains(1 << 21);
    best = std::max(best, flop / (ThreadSeconds() - t0) / 1e9);
  }
  return best;
}

// The float32 peak of this core: the faster of the two widths (GFLOPS, one thread).
inline double PeakGflops() {
  const double ymm = __builtin_cpu_supports("fma") ? Measure(YmmChains) : 0;
  const double zmm = __builtin_cpu_supports("avx512f") ? Measure(ZmmChains) : 0;
  return std::max(ymm, zmm);
}

}  // namespace fma_peak
