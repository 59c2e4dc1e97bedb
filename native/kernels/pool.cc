// Max and average pooling over NCHW planes, parallel over planes. Scalar loops: pooling moves a
// fraction of the bytes a convolution beside it does, and its windows are small.
#include "pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "thread_pool.h"

namespace rt {

// One output row of max pooling: the window rows are visited one at a time and each updates all
// the row's running maxima, so the inner loop runs over output columns (long, regular, no
// per-window setup). Columns whose window tap falls in the padding skip that tap.
template <class T>
void MaxPoolRow(const MaxPoolGeometry& g, const T* src, int64_t i, T* o, int32_t* ix) {
  const int64_t W = g.w, OW = g.ow, SW = g.sw;
  int64_t h0 = i * g.sh - g.ph;
  const int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.h);
  while (h0 < 0) h0 += g.dh;
  for (int64_t j = 0; j < OW; j++) {
    int64_t w0 = j * SW - g.pw;
    const int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, W);
    while (w0 < 0) w0 += g.dw;
    // PyTorch's rule: the index starts at the window's first in-range position. A window with none
    // (wholly in the padding) gets -1, where PyTorch's would point past the window.
    o[j] = -std::numeric_limits<T>::infinity();
    ix[j] = h0 < h1 && w0 < w1 ? int32_t(h0 * W + w0) : -1;
  }
  for (int64_t a = h0; a < h1; a += g.dh) {
    const T* row = src + a * W;
    for (int64_t kj = 0; kj < g.kw; kj++) {
      const int64_t off = kj * g.dw - g.pw;
      // Output columns j whose tap j*SW + off lies in [0, W).
      const int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
      const int64_t hi = std::min(OW, W - off <= 0 ? 0 : (W - off + SW - 1) / SW);
      const T* r = row + off;
      const int32_t base = int32_t(a * W + off);
      for (int64_t j = lo; j < hi; j++) {
        const T s = r[j * SW];
        // NaN replaces anything; selects, not branches: the winner is unpredictable.
        const bool take = (s > o[j]) | (s != s);
        o[j] = take ? s : o[j];
        ix[j] = take ? base + int32_t(j * SW) : ix[j];
      }
    }
  }
}

template <class T>
void MaxPool2d(const MaxPoolGeometry& g, const T* x, T* out, int32_t* indices) {
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelRange(g.planes, double(oplane * g.kh * g.kw), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++)
      for (int64_t i = 0; i < g.oh; i++) MaxPoolRow(g, x + p * plane, i, out + p * oplane + i * g.ow, indices + p * oplane + i * g.ow);
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
