// The products the native GEMM tools time (gemm_tune.cc, gemm_vs_openblas.cc): the squares of
// bench/gemm.ts, the MLP's three products, the GPT's widest linears, and attention's batched pair.
#pragma once
#include <cstdint>

struct GemmShape {
  const char* name;
  int64_t batch, m, n, k;
  bool transA, transB;
};

inline const GemmShape kGemmShapes[] = {
    {"256^2", 1, 256, 256, 256, false, false},        {"512^2", 1, 512, 512, 512, false, false},
    {"1024^2", 1, 1024, 1024, 1024, false, false},    {"2048^2", 1, 2048, 2048, 2048, false, false},
    {"fc1 x@w.T 64x1024x784", 1, 64, 1024, 784, false, true},
    {"fc2 dX g@w 64x1024x1024", 1, 64, 1024, 1024, false, false},
    {"fc2 dW g.T@x 1024x1024x64", 1, 1024, 1024, 64, true, false},
    {"ffn1 x@w.T 1024x1024x256", 1, 1024, 1024, 256, false, true},
    {"head x@w.T 1024x8192x256", 1, 1024, 8192, 256, false, true},
    {"attn q@k.T 32x128x128x64", 32, 128, 128, 64, false, true},
    {"attn p@v 32x128x64x128", 32, 128, 64, 128, false, false},
    {"attn p@v 8x256x64x256", 8, 256, 64, 256, false, false},
    {"attn p@v 4x512x64x512", 4, 512, 64, 512, false, false},
    {"cls x@w.T 1024x16x256", 1, 1024, 16, 256, false, true},
};
