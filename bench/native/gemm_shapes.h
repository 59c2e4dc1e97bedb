// The products the native GEMM tools time (gemm_tune.cc, gemm_vs_openblas.cc): the squares of
// bench/gemm.ts, the MLP's three products, the GPT's widest linears, and attention's batched pair;
// then ("tf") the small Transformer's linears of bench/dataparallel.ts (d 64, 1024 tokens) and
// weight gradients g.T @ x of other widths (a GPT's d 256 qkv over 1024 tokens, odd edges), and
// attention's dV.
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
    {"tf qkv x@w.T 1024x192x64", 1, 1024, 192, 64, false, true},
    {"tf dX g@w 1024x64x192", 1, 1024, 64, 192, false, false},
    {"tf dW g.T@x 192x64x1024", 1, 192, 64, 1024, true, false},
    {"tf dW g.T@x 64x64x1024", 1, 64, 64, 1024, true, false},
    {"dW g.T@x 2048x64x1024", 1, 2048, 64, 1024, true, false},
    {"gpt dW g.T@x 768x256x1024", 1, 768, 256, 1024, true, false},
    {"gpt head dW g.T@x 8192x256x1024", 1, 8192, 256, 1024, true, false},
    {"dW g.T@x 100x50x700", 1, 100, 50, 700, true, false},
    // attention's backward through an unfused p @ v: dV = p.T @ g (a column-major A, head-size columns)
    {"attn dV p.T@g 32x128x64x128", 32, 128, 64, 128, true, false},
    {"attn dV p.T@g 4x512x64x512", 4, 512, 64, 512, true, false},
};
