// Max and average pooling over NCHW planes, parallel over planes. Scalar loops: pooling moves a
// fraction of the bytes a convolution beside it does, and its windows are small.
#include "pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "thread_pool.h"

namespace rt {

template <class T>
void MaxPool2d(const MaxPoolGeometry& g, const T* x, T* out, int32_t* indices) {
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelRange(g.planes, double(oplane * g.kh * g.kw), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
      const T* src = x + p * plane;
      for (int64_t i = 0; i < g.oh; i++) {
        int64_t h0 = i * g.sh - g.ph;
        const int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.h);
        while (h0 < 0) h0 += g.dh;
        for (int64_t j = 0; j < g.ow; j++) {
          int64_t w0 = j * g.sw - g.pw;
          const int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, g.w);
          while (w0 < 0) w0 += g.dw;
          // PyTorch's rule: start at the first in-range position, and let NaN replace anything.
          int64_t best = h0 * g.w + w0;
          T v = -std::numeric_limits<T>::infinity();
          for (int64_t a = h0; a < h1; a += g.dh)
            for (int64_t b = w0; b < w1; b += g.dw) {
              const T s = src[a * g.w + b];
              if (s > v || std::isnan(s)) v = s, best = a * g.w + b;
            }
          out[p * oplane + i * g.ow + j] = v;
          indices[p * oplane + i * g.ow + j] = int32_t(best);
        }
      }
    }
  });
}

template <class T>
void AvgPool2d(const AvgPoolWindows& g, const T* x, T* out) {
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelRange(g.planes, double(plane + oplane), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
      const T* src = x + p * plane;
      for (int64_t i = 0; i < g.oh; i++)
        for (int64_t j = 0; j < g.ow; j++) {
          T s = 0;
          for (int64_t a = g.h_start[i]; a < g.h_end[i]; a++)
            for (int64_t b = g.w_start[j]; b < g.w_end[j]; b++) s += src[a * g.w + b];
          const bool empty = g.h_start[i] >= g.h_end[i] || g.w_start[j] >= g.w_end[j];
          out[p * oplane + i * g.ow + j] = empty ? T(0) : T(s / T(g.divisors[i * g.ow + j]));
        }
    }
  });
}

template <class T>
void AvgPool2dBackward(const AvgPoolWindows& g, const T* grad, T* grad_x) {
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelRange(g.planes, double(plane + oplane), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
      T* dst = grad_x + p * plane;
      std::fill(dst, dst + plane, T(0));
      for (int64_t i = 0; i < g.oh; i++)
        for (int64_t j = 0; j < g.ow; j++) {
          const T v = T(grad[p * oplane + i * g.ow + j] / T(g.divisors[i * g.ow + j]));
          for (int64_t a = g.h_start[i]; a < g.h_end[i]; a++)
            for (int64_t b = g.w_start[j]; b < g.w_end[j]; b++) dst[a * g.w + b] += v;
        }
    }
  });
}

template void MaxPool2d<float>(const MaxPoolGeometry&, const float*, float*, int32_t*);
template void MaxPool2d<double>(const MaxPoolGeometry&, const double*, double*, int32_t*);
template void AvgPool2d<float>(const AvgPoolWindows&, const float*, float*);
template void AvgPool2d<double>(const AvgPoolWindows&, const double*, double*);
template void AvgPool2dBackward<float>(const AvgPoolWindows&, const float*, float*);
template void AvgPool2dBackward<double>(const AvgPoolWindows&, const double*, double*);

}  // namespace rt
