#include "rowwise.h"

#include "dispatch.h"
#include "thread_pool.h"

namespace rt {
namespace {

// Rough per-element costs relative to an add, for the parallel threshold.
double UnaryCost(int op) {
  switch (op) {
    case kExp: case kLog: case kTanh: case kSigmoid: case kSilu: case kGelu: case kGeluTanh: case kPowScalar: return 8;
    default: return 1;
  }
}

template <class T>
const TypedKernels<T>& K() {
  return Kernels().get<T>();
}

}  // namespace

template <class T>
void Unary(int op, const T* x, T* out, int64_t n, T p0, T p1) {
  ParallelRange(n, UnaryCost(op), [&](int64_t i0, int64_t i1) { K<T>().unary(op, x + i0, out + i0, i1 - i0, p0, p1); });
}

template <class T>
void UnaryGrad(int op, const T* grad, const T* saved, T* out, int64_t n, T p0, T p1) {
  const double cost = op == kGradGelu || op == kGradGeluTanh || op == kGradSilu || op == kGradPowScalar ? 8 : 1;
  ParallelRange(n, cost, [&](int64_t i0, int64_t i1) {
    K<T>().unary_grad(op, grad + i0, saved + i0, out + i0, i1 - i0, p0, p1);
  });
}

template <class T>
void Reduce(int op, const T* x, int64_t outer, int64_t size, int64_t inner, T* out, int32_t* indices) {
  ParallelRange(outer, double(size * inner), [&](int64_t o0, int64_t o1) {
    K<T>().reduce(op, x + o0 * size * inner, o1 - o0, size, inner, out + o0 * inner, indices ? indices + o0 * inner : nullptr);
  });
}

template <class T>
void Softmax(const T* x, T* out, int64_t rows, int64_t cols, bool log) {
  ParallelRange(rows, double(cols) * 4, [&](int64_t r0, int64_t r1) {
    K<T>().softmax(x + r0 * cols, out + r0 * cols, r1 - r0, cols, log);
  });
}

template <class T>
void SoftmaxBackward(const T* grad, const T* y, T* out, int64_t rows, int64_t cols, bool log) {
  ParallelRange(rows, double(cols) * 2, [&](int64_t r0, int64_t r1) {
    K<T>().softmax_backward(grad + r0 * cols, y + r0 * cols, out + r0 * cols, r1 - r0, cols, log);
  });
}

template <class T>
void LayerNorm(const T* x, int64_t rows, int64_t cols, const T* w, const T* b, T eps, T* out, T* mean, T* rstd) {
  ParallelRange(rows, double(cols) * 3, [&](int64_t r0, int64_t r1) {
    K<T>().layer_norm(x + r0 * cols, r1 - r0, cols, w, b, eps, out + r0 * cols, mean + r0, rstd + r0);
  });
}

template <class T>
void LayerNormBackward(const T* grad, const T* x, int64_t rows, int64_t cols, const T* w, const T* mean, const T* rstd,
                       T* grad_x, T* grad_w, T* grad_b) {
  ParallelRange(rows, double(cols) * 3, [&](int64_t r0, int64_t r1) {
    K<T>().layer_norm_backward_x(grad + r0 * cols, x + r0 * cols, r1 - r0, cols, w, mean + r0, rstd + r0,
                                 grad_x + r0 * cols);
  });
  if (!grad_w && !grad_b) return;
  ParallelRange(cols, double(rows) * 2, [&](int64_t c0, int64_t c1) {
    K<T>().layer_norm_backward_w(grad, x, rows, cols, c0, c1, mean, rstd, grad_w, grad_b);
  });
}

template <class T>
void Adam(const AdamParams& p, T* param, const T* grad, T* m, T* v, T* max_v, int64_t n) {
  ParallelRange(n, 4, [&](int64_t i0, int64_t i1) {
    K<T>().adam(p, param + i0, grad + i0, m + i0, v + i0, max_v ? max_v + i0 : nullptr, i1 - i0);
  });
}

template <class T>
void Sgd(const SgdParams& p, T* param, const T* grad, T* buf, int64_t n) {
  ParallelRange(n, 2, [&](int64_t i0, int64_t i1) {
    K<T>().sgd(p, param + i0, grad + i0, buf ? buf + i0 : nullptr, i1 - i0);
  });
}

template <class T>
double SumSquares(const T* x, int64_t n) {
  return K<T>().sum_squares(x, n);
}

template <class T>
void CrossEntropy(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore, T smoothing, T* loss,
                  T* stats) {
  ParallelRange(rows, double(cols) * 6, [&](int64_t r0, int64_t r1) {
    K<T>().cross_entropy(x + r0 * cols, r1 - r0, cols, target + r0, ignore, smoothing, loss + r0, stats + 2 * r0);
  });
}

template <class T>
void CrossEntropyBackward(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore, T smoothing,
                          const T* stats, const T* scale, T* out) {
  ParallelRange(rows, double(cols) * 4, [&](int64_t r0, int64_t r1) {
    K<T>().cross_entropy_backward(x + r0 * cols, r1 - r0, cols, target + r0, ignore, smoothing, stats + 2 * r0,
                                  scale + r0, out + r0 * cols);
  });
}

#define RT_INSTANTIATE(T)                                                                                      \
  template void Unary<T>(int, const T*, T*, int64_t, T, T);                                                    \
  template void UnaryGrad<T>(int, const T*, const T*, T*, int64_t, T, T);                                      \
  template void Reduce<T>(int, const T*, int64_t, int64_t, int64_t, T*, int32_t*);                             \
  template void Softmax<T>(const T*, T*, int64_t, int64_t, bool);                                              \
  template void SoftmaxBackward<T>(const T*, const T*, T*, int64_t, int64_t, bool);                            \
  template void LayerNorm<T>(const T*, int64_t, int64_t, const T*, const T*, T, T*, T*, T*);                   \
  template void LayerNormBackward<T>(const T*, const T*, int64_t, int64_t, const T*, const T*, const T*, T*, T*, \
                                     T*);                                                                      \
  template void Adam<T>(const AdamParams&, T*, const T*, T*, T*, T*, int64_t);                                 \
  template void Sgd<T>(const SgdParams&, T*, const T*, T*, int64_t);                                           \
  template double SumSquares<T>(const T*, int64_t);                                                            \
  template void CrossEntropy<T>(const T*, int64_t, int64_t, const int32_t*, int32_t, T, T*, T*);                 \
  template void CrossEntropyBackward<T>(const T*, int64_t, int64_t, const int32_t*, int32_t, T, const T*, const T*, T*);
RT_INSTANTIATE(float)
RT_INSTANTIATE(double)
#undef RT_INSTANTIATE

}  // namespace rt
