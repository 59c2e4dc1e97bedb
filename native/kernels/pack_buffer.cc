// Why huge pages for the packing buffers: the micro-kernel walks a 6 MiB packed block of B sliver by
// sliver and A's block of 576 KiB sliver by sliver for every sliver of B; on 4 KiB pages that is
// 1600 pages next to the ones C and the unpacked operands already hold in the TLB (Zen 3: 64 L1 and
// 2048 L2 entries); on 2 MiB pages it is 4. The rounding to whole huge pages is what lets the kernel
// use them (a huge page must lie wholly inside the mapping): under 2 MiB more per thread, and only
// once touched.
#include "pack_buffer.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace rt {
namespace {

constexpr size_t kHuge = size_t(2) << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

bool HugePagesWanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("RINGTORCH_GEMM_HUGEPAGES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return wanted;
}

}  // namespace

void* PackBuffer::get(size_t bytes) {
  if (p_) return p_;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHuge && HugePagesWanted()) {
    // Over-map by one huge page and trim to a 2 MiB-aligned start: mmap itself promises 4 KiB.
    const size_t size = RoundUp(bytes, kHuge);
    void* raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t aligned = RoundUp(start, kHuge);
      if (aligned > start) munmap(raw, aligned - start);
      const uintptr_t end = aligned + size;
      if (end < start + size + kHuge) munmap(reinterpret_cast<void*>(end), start + size + kHuge - end);
      p_ = reinterpret_cast<void*>(aligned);
      mapped_ = size;
      // Advice only: where huge pages are off or used up the buffer stays on 4 KiB pages.
      madvise(p_, size, MADV_HUGEPAGE);
      return p_;
    }
  }
#endif
  p_ = std::aligned_alloc(64, RoundUp(bytes, 64));
  return p_;
}

PackBuffer::~PackBuffer() {
#if defined(__linux__)
  if (mapped_) {
    munmap(p_, mapped_);
    return;
  }
#endif
  std::free(p_);
}

}  // namespace rt
