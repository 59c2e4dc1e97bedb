// Mixed-precision GEMM: bfloat16 operands, float32 accumulation and output (what autocast runs).
// An operand is float32 or bfloat16 storage; float32 values are rounded to bfloat16 (nearest even)
// as they are packed, so a float32 tensor needs no separate cast.
#pragma once
#include <cstdint>

namespace rt {

struct Bf16Operand {
  const void* data;  // element (b, row, col) at data[b * bs + row * rs + col * cs]
  bool bf16;         // true: uint16 bfloat16 bits; false: float32
  int64_t rs, cs, bs;
};

// out[b] = alpha * A[b] @ B[b] + beta * out[b]; out contiguous float32 [batch, m, n].
struct Bf16MatmulArgs {
  int64_t batch, m, n, k;
  Bf16Operand a, b;
  float* out;
  float alpha, beta;
};

// One matrix on the calling thread (k > 0), as the ISA file computes it.
struct Bf16GemmProblem {
  int64_t m, n, k;
  Bf16Operand a, b;  // bs unused
  float* c;
  int64_t ldc;
  float alpha, beta;
};

void MatmulBf16(const Bf16MatmulArgs& args);

// One matrix on the calling thread, on the active path: for kernels that tile and thread their own
// work (the fused attention's products under autocast). Any k, including 0.
void GemmBf16OnThisThread(const Bf16GemmProblem& p);

// "amx" (tdpbf16ps tiles), "avx512bf16" (vdpbf16ps) or "portable" (operands rounded into float32
// copies, then the float32 GEMM of the active ISA: the same products, summed in another order).
const char* Bf16GemmPath();
// "auto", "amx", "avx512bf16" or "portable"; false (and no change) when this CPU cannot run it.
bool SelectBf16GemmPath(const char* name);
bool Bf16GemmPathSupported(const char* name);

// From isa_avx512bf16.cc: null where not compiled for x86-64.
using Bf16GemmFn = void (*)(const Bf16GemmProblem&);
Bf16GemmFn Avx512Bf16Gemm();
int Avx512Bf16TileRows();
int Avx512Bf16TileCols();

// From isa_amx.cc: whether this CPU and OS can run it (checked once per process, which asks Linux
// for the tile state), the kernel (null where not compiled for x86-64 Linux), and its C block.
bool AmxBf16Supported();
Bf16GemmFn AmxBf16Gemm();
int AmxBf16TileRows();
int AmxBf16TileCols();

}  // namespace rt
