// The addon's one pool of worker threads for GEMM and large elementwise work. The calling thread
// always takes part, so a pool of n threads starts n - 1 workers; with n = 1 nothing is started and
// ParallelFor is a plain loop.
#pragma once
#include <cstdint>

namespace rt {

void SetNumThreads(int n);
int GetNumThreads();

// Runs fn(ctx, task) for every task in [0, ntasks) and returns when all are done. Runs everything on
// the caller when the pool has one thread, when ntasks is 1, or when the pool is already busy
// (a nested call, or a second JS thread calling in), so it never waits on itself.
void ParallelFor(int64_t ntasks, void (*fn)(void*, int64_t), void* ctx);

template <class F>
inline void ParallelFor(int64_t ntasks, F&& f) {
  ParallelFor(ntasks, [](void* c, int64_t t) { (*static_cast<F*>(c))(t); }, &f);
}

// Splits [0, n) into chunks when n * cost_per_item is worth waking the workers, and runs
// fn(begin, end) on each. A few chunks per thread, claimed dynamically, so that a thread another
// process preempts holds up only a small part.
template <class F>
inline void ParallelRange(int64_t n, double cost_per_item, F&& f) {
  constexpr double kMinParallelWork = 1 << 17;
  const int nt = GetNumThreads();
  if (nt <= 1 || n < 2 || double(n) * cost_per_item < kMinParallelWork) {
    f(int64_t(0), n);
    return;
  }
  const int64_t chunks = n < 4 * nt ? n : 4 * nt;
  ParallelFor(chunks, [&](int64_t t) { f(n * t / chunks, n * (t + 1) / chunks); });
}

}  // namespace rt
