#pragma once
#include <cstdint>

namespace rt {

// Per-channel kernels of batch normalisation over [n, c, l] tensors (l = the spatial size).
// TypeScript composes batch norm (and its cross-rank form) from them: the sums are what ranks
// all-reduce, and every per-channel coefficient is computed from them on the small [c] arrays.

// sum_a[ch] = Σ a, sum_ab[ch] = Σ a·b (b null: Σ a²), over n and l, accumulated in double.
template <class T>
void ChannelSums(const T* a, const T* b, int64_t n, int64_t c, int64_t l, double* sum_a, double* sum_ab);

// out = a·sa[ch] + b·sb[ch] + shift[ch] (b and sb null: out = a·sa[ch] + shift[ch]).
template <class T>
void ChannelAffine(const T* a, const T* b, int64_t n, int64_t c, int64_t l, const double* sa, const double* sb,
                   const double* shift, T* out);

}  // namespace rt
