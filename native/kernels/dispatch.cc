#include "dispatch.h"

#include <atomic>
#include <cstring>

namespace rt {
namespace {

bool CpuHas(const char* feature) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (std::strcmp(feature, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  // libgcc's check includes the OS saving the zmm state (XCR0).
  if (std::strcmp(feature, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  (void)feature;
#endif
  return false;
}

const KernelTable* TableFor(const char* name) {
  if (std::strcmp(name, "portable") == 0) return PortableKernels();
  if (std::strcmp(name, "avx2") == 0) return CpuHas("avx2") ? Avx2Kernels() : nullptr;
  if (std::strcmp(name, "avx512") == 0) return CpuHas("avx512") ? Avx512Kernels() : nullptr;
  return nullptr;
}

const KernelTable* Best() {
  if (const KernelTable* t = TableFor("avx512")) return t;
  if (const KernelTable* t = TableFor("avx2")) return t;
  return PortableKernels();
}

std::atomic<const KernelTable*> g_active{nullptr};

}  // namespace

const KernelTable& Kernels() {
  const KernelTable* t = g_active.load(std::memory_order_acquire);
  if (!t) {
    t = Best();
    g_active.store(t, std::memory_order_release);
  }
  return *t;
}

bool IsaSupported(const char* name) { return TableFor(name) != nullptr; }

bool SelectIsa(const char* name) {
  const KernelTable* t = std::strcmp(name, "auto") == 0 ? Best() : TableFor(name);
  if (!t) return false;
  g_active.store(t, std::memory_order_release);
  return true;
}

const char* ActiveIsa() { return Kernels().name; }

}  // namespace rt
