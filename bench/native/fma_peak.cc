// Prints this core's float32 FMA peak (fma_peak.h): zmm and ymm chains on one thread, then on
// every CPU at once (each thread timed on its own CPU clock, so the sum is the machine's peak
// however other jobs load it, less any clock the cores lose when all of them run vector code).
//
//   g++ -O3 -std=c++17 -pthread bench/native/fma_peak.cc -o /tmp/fma_peak && /tmp/fma_peak
#include "fma_peak.h"

#include <cstdio>
#include <thread>
#include <vector>

int main() {
  if (!__builtin_cpu_supports("fma")) {
    std::printf("this CPU has no FMA: nothing to measure\n");
    return 0;
  }
  const bool zmm = __builtin_cpu_supports("avx512f");
  const double y = fma_peak::Measure(fma_peak::YmmChains);
  const double z = zmm ? fma_peak::Measure(fma_peak::ZmmChains) : 0;
  std::printf("one thread, float32: ymm %.1f GFLOPS", y);
  if (zmm) std::printf(", zmm %.1f GFLOPS", z);
  std::printf(" (peak %.1f)\n", std::max(y, z));
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> each(n);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; i++)
    threads.emplace_back([&, i] { each[i] = fma_peak::Measure(zmm ? fma_peak::ZmmChains : fma_peak::YmmChains); });
  double sum = 0;
  for (unsigned i = 0; i < n; i++) threads[i].join(), sum += each[i];
  std::printf("%u threads at once, %s: %.1f GFLOPS in all (", n, zmm ? "zmm" : "ymm", sum);
  for (unsigned i = 0; i < n; i++) std::printf("%s%.1f", i ? " + " : "", each[i]);
  std::printf(")\n");
  return 0;
}
