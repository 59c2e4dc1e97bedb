#pragma once
#include <cstdint>

#include "kernel_table.h"

namespace rt {

// The ISA kernels over whole arguments, split over the pool when large enough to pay off. Argument
// meanings follow backend.ts; pointers already include their offsets.

template <class T>
void Unary(int op, const T* x, T* out, int64_t n, T p0, T p1);
template <class T>
void UnaryGrad(int op, const T* grad, const T* saved, T* out, int64_t n, T p0, T p1);
template <class T>
void Reduce(int op, const T* x, int64_t outer, int64_t size, int64_t inner, T* out, int32_t* indices);
template <class T>
void Softmax(const T* x, T* out, int64_t rows, int64_t cols, bool log);
template <class T>
void SoftmaxBackward(const T* grad, const T* y, T* out, int64_t rows, int64_t cols, bool log);
template <class T>
void LayerNorm(const T* x, int64_t rows, int64_t cols, const T* w, const T* b, T eps, T* out, T* mean, T* rstd);
template <class T>
void LayerNormBackward(const T* grad, const T* x, int64_t rows, int64_t cols, const T* w, const T* mean, const T* rstd,
                       T* grad_x, T* grad_w, T* grad_b);
template <class T>
void Adam(const AdamParams& p, T* param, const T* grad, T* m, T* v, T* max_v, int64_t n);
template <class T>
void Sgd(const SgdParams& p, T* param, const T* grad, T* buf, int64_t n);
template <class T>
double SumSquares(const T* x, int64_t n);
template <class T>
void CrossEntropy(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore, T smoothing, T* loss,
                  T* stats);
template <class T>
void CrossEntropyBackward(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore, T smoothing,
                          const T* stats, const T* scale, T* out);

}  // namespace rt
