// 2-d convolution as im2col + the packed GEMM, one image at a time so that an image's column matrix
// stays in cache between being written and being packed. Images run in parallel on the pool (each
// thread with its own column buffer) when there are at least as many images as threads; otherwise
// each GEMM splits over the threads instead. A 1x1 kernel with stride 1 and no padding reads the
// input as its own column matrix.
#include "conv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "dispatch.h"
#include "matmul.h"
#include "thread_pool.h"

namespace rt {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The output columns [lo, hi) whose input column ow*sw + off lies inside [0, w).
void ValidRange(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : CeilDiv(-off, s);
  hi = w - off <= 0 ? 0 : CeilDiv(w - off, s);
  hi = std::min(hi, ow);
  lo = std::min(lo, hi);
}

// cols [cpg*kh*kw, oh*ow] from the cpg channels starting at x (one image, one group).
template <class T>
void Im2col(const ConvGeometry& g, const T* x, int64_t cpg, T* cols) {
  const int64_t L = g.oh * g.ow, plane = g.h * g.w;
  for (int64_t c = 0; c < cpg; c++)
    for (int64_t ki = 0; ki < g.kh; ki++)
      for (int64_t kj = 0; kj < g.kw; kj++) {
        T* row = cols + ((c * g.kh + ki) * g.kw + kj) * L;
        const T* src = x + c * plane;
        const int64_t off_w = kj * g.dw - g.pw;
        int64_t lo, hi;
        ValidRange(off_w, g.sw, g.w, g.ow, lo, hi);
        for (int64_t oh = 0; oh < g.oh; oh++) {
          T* r = row + oh * g.ow;
          const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
          if (ih < 0 || ih >= g.h) {
            std::fill(r, r + g.ow, T(0));
            continue;
          }
          std::fill(r, r + lo, T(0));
          const T* s = src + ih * g.w + off_w;
          if (g.sw == 1) std::memcpy(r + lo, s + lo, size_t(hi - lo) * sizeof(T));
          else
            for (int64_t o = lo; o < hi; o++) r[o] = s[o * g.sw];
          std::fill(r + hi, r + g.ow, T(0));
        }
      }
}

// The adjoint of Im2col: adds each column entry into the input position it was read from.
template <class T>
void Col2im(const ConvGeometry& g, const T* cols, int64_t cpg, T* x) {
  const int64_t L = g.oh * g.ow, plane = g.h * g.w;
  for (int64_t c = 0; c < cpg; c++)
    for (int64_t ki = 0; ki < g.kh; ki++)
      for (int64_t kj = 0; kj < g.kw; kj++) {
        const T* row = cols + ((c * g.kh + ki) * g.kw + kj) * L;
        T* dst = x + c * plane;
        const int64_t off_w = kj * g.dw - g.pw;
        int64_t lo, hi;
        ValidRange(off_w, g.sw, g.w, g.ow, lo, hi);
        for (int64_t oh = 0; oh < g.oh; oh++) {
          const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          const T* r = row + oh * g.ow;
          T* d = dst + ih * g.w + off_w;
          if (g.sw == 1)
            for (int64_t o = lo; o < hi; o++) d[o] += r[o];
          else
            for (int64_t o = lo; o < hi; o++) d[o * g.sw] += r[o];
        }
      }
}

bool Pointwise(const ConvGeometry& g) { return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0; }

// One GEMM with a contiguous [m, n] output: on this thread alone (inside a per-image task), or
// split over the pool.
template <class T>
void Gemm(const GemmProblem<T>& p, bool alone) {
  if (alone) return Kernels().get<T>().gemm(p);
  MatmulArgs<T> a{1, p.m, p.n, p.k, p.a, p.rsa, p.csa, 0, p.b, p.rsb, p.csb, 0, p.c, p.alpha, p.beta};
  Matmul(a);
}

// Runs fn(image, alone) for every image: in parallel over images when there are enough of them.
template <class F>
void ForImages(int64_t n, F&& fn) {
  const int nt = GetNumThreads();
  if (nt > 1 && n >= nt) {
    ParallelFor(n, [&](int64_t i) { fn(i, true); });
  } else {
    for (int64_t i = 0; i < n; i++) fn(i, nt == 1);
  }
}

template <class T>
std::vector<T>& ColsBuffer(size_t size) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < size) buffer.resize(size);
  return buffer;
}

}  // namespace

template <class T>
void Conv2dForward(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* out) {
  const int64_t cpg = g.c / g.groups, ocpg = g.oc / g.groups, ckk = cpg * g.kh * g.kw, L = g.oh * g.ow;
  const bool pointwise = Pointwise(g);
  ForImages(g.n, [&](int64_t img, bool alone) {
    T* cols = pointwise ? nullptr : ColsBuffer<T>(size_t(ckk * L)).data();
    for (int64_t grp = 0; grp < g.groups; grp++) {
      const T* xg = x + (img * g.c + grp * cpg) * g.h * g.w;
      if (!pointwise) Im2col(g, xg, cpg, cols);
      T* o = out + (img * g.oc + grp * ocpg) * L;
      if (bias)
        for (int64_t r = 0; r < ocpg; r++) std::fill(o + r * L, o + (r + 1) * L, bias[grp * ocpg + r]);
      GemmProblem<T> p{ocpg, L, ckk, w + grp * ocpg * ckk, ckk, 1, pointwise ? xg : cols, L, 1, o, L, T(1), T(bias ? 1 : 0)};
      Gemm(p, alone);
    }
  });
}

template <class T>
void Conv2dBackwardInput(const ConvGeometry& g, const T* grad, const T* w, T* grad_x) {
  const int64_t cpg = g.c / g.groups, ocpg = g.oc / g.groups, ckk = cpg * g.kh * g.kw, L = g.oh * g.ow;
  const bool pointwise = Pointwise(g);
  ForImages(g.n, [&](int64_t img, bool alone) {
    T* gx = grad_x + img * g.c * g.h * g.w;
    T* cols = pointwise ? nullptr : ColsBuffer<T>(size_t(ckk * L)).data();
    if (!pointwise) std::fill(gx, gx + g.c * g.h * g.w, T(0));
    for (int64_t grp = 0; grp < g.groups; grp++) {
      T* target = pointwise ? gx + grp * cpg * L : cols;
      // cols = W_gᵀ [ckk, ocpg] @ grad_g [ocpg, L]: the weight read transposed through its strides.
      GemmProblem<T> p{ckk, L, ocpg, w + grp * ocpg * ckk, 1, ckk, grad + (img * g.oc + grp * ocpg) * L, L, 1, target, L, T(1), T(0)};
      Gemm(p, alone);
      if (!pointwise) Col2im(g, cols, cpg, gx + grp * cpg * g.h * g.w);
    }
  });
}

template <class T>
void Conv2dBackwardWeight(const ConvGeometry& g, const T* grad, const T* x, T* grad_w, T* grad_bias) {
  const int64_t cpg = g.c / g.groups, ocpg = g.oc / g.groups, ckk = cpg * g.kh * g.kw, L = g.oh * g.ow;
  if (grad_bias) {
    for (int64_t ch = 0; ch < g.oc; ch++) {
      double s = 0;
      for (int64_t img = 0; img < g.n; img++) {
        const T* r = grad + (img * g.oc + ch) * L;
        for (int64_t i = 0; i < L; i++) s += double(r[i]);
      }
      grad_bias[ch] = T(s);
    }
  }
  if (!grad_w) return;
  const int64_t wsize = g.oc * ckk;
  if (g.n == 0 || wsize == 0) {
    std::fill(grad_w, grad_w + wsize, T(0));
    return;
  }
  const bool pointwise = Pointwise(g);
  // Each task sums its share of the images into its own accumulator (task 0 into grad_w); the
  // accumulators are added at the end, so no two threads write one element.
  const int nt = GetNumThreads();
  const int64_t tasks = nt > 1 && g.n > 1 ? std::min<int64_t>(nt, g.n) : 1;
  std::vector<T> scratch(size_t((tasks - 1) * wsize));
  auto run = [&](int64_t t) {
    T* acc = t == 0 ? grad_w : scratch.data() + (t - 1) * wsize;
    T* cols = pointwise ? nullptr : ColsBuffer<T>(size_t(ckk * L)).data();
    const int64_t first = g.n * t / tasks, last = g.n * (t + 1) / tasks;
    for (int64_t img = first; img < last; img++)
      for (int64_t grp = 0; grp < g.groups; grp++) {
        const T* xg = x + (img * g.c + grp * cpg) * g.h * g.w;
        if (!pointwise) Im2col(g, xg, cpg, cols);
        // acc_g [ocpg, ckk] += grad_g [ocpg, L] @ colsᵀ [L, ckk].
        GemmProblem<T> p{ocpg, ckk, L, grad + (img * g.oc + grp * ocpg) * L, L, 1, pointwise ? xg : cols, 1, L,
                         acc + grp * ocpg * ckk, ckk, T(1), T(img == first ? 0 : 1)};
        Gemm(p, tasks > 1 || nt == 1);
      }
  };
  if (tasks == 1) run(0);
  else ParallelFor(tasks, [&](int64_t t) { run(t); });
  for (int64_t t = 1; t < tasks; t++) {
    const T* s = scratch.data() + (t - 1) * wsize;
    for (int64_t i = 0; i < wsize; i++) grad_w[i] += s[i];
  }
}

template void Conv2dForward<float>(const ConvGeometry&, const float*, const float*, const float*, float*);
template void Conv2dForward<double>(const ConvGeometry&, const double*, const double*, const double*, double*);
template void Conv2dBackwardInput<float>(const ConvGeometry&, const float*, const float*, float*);
template void Conv2dBackwardInput<double>(const ConvGeometry&, const double*, const double*, double*);
template void Conv2dBackwardWeight<float>(const ConvGeometry&, const float*, const float*, float*, float*);
template void Conv2dBackwardWeight<double>(const ConvGeometry&, const double*, const double*, double*, double*);

}  // namespace rt
