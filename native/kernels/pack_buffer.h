// The GEMMs' per-thread packing buffers, on transparent huge pages where the system allows it.
#pragma once
#include <cstddef>

namespace rt {

// One thread's packing memory, allocated on first use and kept for the thread's life. From 2 MiB up
// (the packed block of B) it is mapped 2 MiB-aligned, rounded up to whole 2 MiB pages and advised
// MADV_HUGEPAGE, so that a system whose transparent huge pages are `madvise` (not `always`) still
// backs it with huge pages; smaller ones, or all with RINGTORCH_GEMM_HUGEPAGES=0 (read once), come
// from aligned_alloc on 4 KiB pages.
class PackBuffer {
 public:
  PackBuffer() = default;
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;
  ~PackBuffer();
  // At least `bytes`, 64-byte aligned; the same memory on every call (the first call's size holds).
  void* get(size_t bytes);

 private:
  void* p_ = nullptr;
  size_t mapped_ = 0;  // bytes mapped, 0 for aligned_alloc
};

}  // namespace rt
