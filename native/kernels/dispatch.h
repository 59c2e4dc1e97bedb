// Which kernel table runs: the best the CPU supports, or one named for tests.
#pragma once
#include "kernel_table.h"

namespace rt {

const KernelTable& Kernels();
// True if this build has the named table ("portable", "avx2", "avx512") and the CPU can run it.
bool IsaSupported(const char* name);
// Selects the named table ("auto" = the best supported); false (and no change) if unsupported.
bool SelectIsa(const char* name);
const char* ActiveIsa();

}  // namespace rt
