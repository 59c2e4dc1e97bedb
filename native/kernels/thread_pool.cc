#include "thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define RT_PAUSE() _mm_pause()
#else
#define RT_PAUSE() std::this_thread::yield()
#endif

namespace rt {
namespace {

// Workers spin this long after a job before sleeping, so the back-to-back GEMMs of a training step
// don't pay a futex wake-up each.
constexpr auto kSpin = std::chrono::microseconds(200);

// A job is open from its publication until the caller has claimed every task. Workers join only an
// open job, and the caller waits only for workers that joined: a worker that is asleep or not yet
// scheduled (likely on a loaded machine) never delays the caller, who then runs its tasks itself.
// state_ packs [generation:32][open:1][joined workers:31] so that joining is one CAS.
constexpr uint64_t kOpen = uint64_t(1) << 31;
constexpr uint64_t kJoinedMask = kOpen - 1;

class Pool {
 public:
  int size() const { return size_.load(std::memory_order_relaxed); }

  void resize(int n) {
    std::lock_guard<std::mutex> run(run_mu_);
    if (n == size()) return;
    stop_workers();
    for (int i = 1; i < n; i++) workers_.emplace_back([this] { work(); });
    size_.store(n, std::memory_order_relaxed);
  }

  void run(int64_t ntasks, void (*fn)(void*, int64_t), void* ctx) {
    std::unique_lock<std::mutex> run(run_mu_, std::try_to_lock);
    if (!run.owns_lock() || workers_.empty() || ntasks <= 1) {
      for (int64_t t = 0; t < ntasks; t++) fn(ctx, t);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = fn;
      ctx_ = ctx;
      ntasks_ = ntasks;
      next_.store(0, std::memory_order_relaxed);
      const uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
      state_.store(gen << 32 | kOpen, std::memory_order_release);
      generation_.store(gen, std::memory_order_release);
    }
    cv_.notify_all();
    drain();
    state_.fetch_and(~kOpen, std::memory_order_acq_rel);
    for (int spins = 0; (state_.load(std::memory_order_acquire) & kJoinedMask) != 0; spins++) {
      if (spins < 4096) RT_PAUSE();
      else std::this_thread::yield();
    }
  }

 private:
  void drain() {
    for (int64_t t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < ntasks_;) fn_(ctx_, t);
  }

  // Joins the open job, if any; true if joined (the caller must then drain and leave).
  bool join() {
    uint64_t s = state_.load(std::memory_order_acquire);
    while (s & kOpen) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      const auto spin_until = std::chrono::steady_clock::now() + kSpin;
      int polls = 0;
      while (generation_.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_relaxed)) {
        RT_PAUSE();
        if (++polls % 64 == 0 && std::chrono::steady_clock::now() > spin_until) {
          std::unique_lock<std::mutex> lk(mu_);
          cv_.wait(lk, [&] { return generation_.load(std::memory_order_relaxed) != seen || stop_.load(); });
          break;
        }
      }
      if (stop_.load()) return;
      seen = generation_.load(std::memory_order_acquire);
      if (join()) {
        drain();
        state_.fetch_sub(1, std::memory_order_release);
      }
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    stop_.store(false);
  }

  std::mutex run_mu_;  // held by the thread running a parallel region, and while resizing
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
  std::atomic<int> size_{1};
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> state_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> next_{0};
  void (*fn_)(void*, int64_t) = nullptr;
  void* ctx_ = nullptr;
  int64_t ntasks_ = 0;
};

// Never destroyed: worker threads may still be parked when the process exits, and joining them from
// a static destructor could deadlock or run after the runtime is gone.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

}  // namespace

void SetNumThreads(int n) { pool().resize(n < 1 ? 1 : n > 256 ? 256 : n); }
int GetNumThreads() { return pool().size(); }
void ParallelFor(int64_t ntasks, void (*fn)(void*, int64_t), void* ctx) { pool().run(ntasks, fn, ctx); }

}  // namespace rt
