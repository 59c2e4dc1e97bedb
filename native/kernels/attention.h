// Fused scaled-dot-product attention (flash-attention style): the scores are computed one tile of
// keys at a time with an online softmax, so memory is O(L + S) per head instead of O(L·S).
#pragma once
#include <cstdint>

namespace rt {

// Element (n, h, row, c) of an operand sits at data[off + n*sn + h*sh + row*sr + c]: the feature
// axis is contiguous, every other axis is strided (permuted head views need no copy).
template <class T>
struct AttnOperand {
  const T* data;
  int64_t sn, sh, sr;
};

// The additive bias, element (n, h, i, j) at data[n*sn + h*sh + i*si + j*sj]; strides of 0
// broadcast. data == nullptr means no bias.
template <class T>
struct AttnBias {
  const T* data;
  int64_t sn, sh, si, sj;
};

template <class T>
struct AttnProblem {
  int64_t n, h, l, s, d, dv;
  AttnOperand<T> q, k, v;
  AttnBias<T> bias;
  bool causal;  // key j is hidden from query i when j > i (top-left aligned, as torch's is_causal)
  double scale;
  double dropout_p;    // 0 disables dropout
  uint64_t seed;       // dropout mask: a hash of (seed, n*h, i, j), recomputed by the backward
  // float only: every product's operands (q, k, v, dout, the probabilities, dS) rounded to
  // bfloat16 and summed in float32, on the bfloat16 GEMM (what autocast runs); the softmax and
  // every other step stay float32.
  bool lowp = false;
};

// out [n, h, l, dv] and lse [n, h, l] (the log of each row's softmax denominator), contiguous.
template <class T>
void AttentionForward(const AttnProblem<T>& p, T* out, T* lse);

// Given out, lse and dout (contiguous [n, h, l, dv]), writes dq [n,h,l,d], dk [n,h,s,d] and
// dv [n,h,s,dv], contiguous, recomputing the probabilities tile by tile.
template <class T>
void AttentionBackward(const AttnProblem<T>& p, const T* out, const T* dout, const T* lse, T* dq, T* dk, T* dv);

// The dropout keep-test shared with the TypeScript reference (src/backend/reference/attention.ts).
inline bool AttnKeep(uint64_t seed, uint64_t index, double p) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 40) * (1.0 / 16777216.0) >= p;
}

}  // namespace rt
