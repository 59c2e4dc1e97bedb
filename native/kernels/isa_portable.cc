// The kernels in portable C++ (GCC/Clang vector extensions): the fallback on any CPU, and the
// reference path the ISA-specific builds are tested against (RINGTORCH_CPU_ISA=portable).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernel_table.h"
#include "pack_buffer.h"

namespace rt_portable {
using namespace rt;
#include "simd_portable.h"
#include "isa_kernels.inl"

using GemmF32 = Gemm<F32, 4, 2, 128, 256, 4088>;
using GemmF64 = Gemm<F64, 4, 2, 64, 256, 2048>;
}  // namespace rt_portable

namespace rt {
static constexpr KernelTable kPortable = {RT_ISA_NAME, rt_portable::MakeKernels<rt_portable::F32, rt_portable::GemmF32>(),
                                          rt_portable::MakeKernels<rt_portable::F64, rt_portable::GemmF64>()};
const KernelTable* PortableKernels() { return &kPortable; }
}  // namespace rt
