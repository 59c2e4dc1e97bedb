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
  const int64_t H = g.h, W = g.w, OH = g.oh, OW = g.ow, KH = g.kh, KW = g.kw, SH = g.sh, SW = g.sw, PH = g.ph, PW = g.pw,
                DH = g.dh, DW = g.dw;
  const int64_t plane = H * W, oplane = OH * OW;
  ParallelRange(g.planes, double(oplane * KH * KW), [=](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
      const T* src = x + p * plane;
      T* o = out + p * oplane;
      int32_t* ix = indices + p * oplane;
      for (int64_t i = 0; i < OH; i++) {
        int64_t h0 = i * SH - PH;
        const int64_t h1 = std::min(h0 + (KH - 1) * DH + 1, H);
        while (h0 < 0) h0 += DH;
        for (int64_t j = 0; j < OW; j++) {
          int64_t w0 = j * SW - PW;
          const int64_t w1 = std::min(w0 + (KW - 1) * DW + 1, W);
          while (w0 < 0) w0 += DW;
          // PyTorch's rule: start at the first in-range position, and let NaN replace anything.
          // Selects instead of branches: which element wins is data-dependent and unpredictable.
          int32_t best = int32_t(h0 * W + w0);
          T v = -std::numeric_limits<T>::infinity();
          for (int64_t a = h0; a < h1; a += DH) {
            const T* row = src + a * W;
            for (int64_t b = w0; b < w1; b += DW) {
              const T s = row[b];
              const bool take = (s > v) | (s != s);
              v = take ? s : v;
              best = take ? int32_t(a * W + b) : best;
            }
          }
          o[i * OW + j] = v;
          ix[i * OW + j] = best;
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
