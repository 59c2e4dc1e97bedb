#pragma once
#include <cstdint>

namespace rt {

// Max pooling over `planes` independent [h, w] planes (batch x channels). pad/dilation as in
// torch.nn.MaxPool2d; oh/ow come from TypeScript (ceil mode decided there). indices receive the
// flat h*w position of each maximum within its plane (NaN wins, as in PyTorch).
struct MaxPoolGeometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  static constexpr int kFields = 13;
  static MaxPoolGeometry From(const double* p) {
    MaxPoolGeometry g;
    int64_t* f[kFields] = {&g.planes, &g.h, &g.w, &g.oh, &g.ow, &g.kh, &g.kw, &g.sh, &g.sw, &g.ph, &g.pw, &g.dh, &g.dw};
    for (int i = 0; i < kFields; i++) *f[i] = int64_t(p[i]);
    return g;
  }
};

template <class T>
void MaxPool2d(const MaxPoolGeometry& g, const T* x, T* out, int32_t* indices);

// Average pooling over separable windows: output (i, j) of each plane averages rows
// [h_start[i], h_end[i]) and columns [w_start[j], w_end[j]) of its [h, w] plane, divided by
// divisors[i * ow + j]. Average, adaptive-average and count-include-pad pooling differ only in
// these windows and divisors, which TypeScript computes. An empty window gives 0.
struct AvgPoolWindows {
  int64_t planes, h, w, oh, ow;
  const int32_t *h_start, *h_end, *w_start, *w_end;
  const double* divisors;
};

template <class T>
void AvgPool2d(const AvgPoolWindows& g, const T* x, T* out);

// grad_x (overwritten) from grad: each window's gradient spread evenly over the window.
template <class T>
void AvgPool2dBackward(const AvgPoolWindows& g, const T* grad, T* grad_x);

}  // namespace rt
