#pragma once
#include <cstdint>

namespace rt {

// The shape of one 2-d convolution over NCHW tensors; conv1d is the case height = kernel_h = 1.
// pad_h/pad_w are the top/left pads: the output size (computed by TypeScript) fixes how much of the
// bottom/right pad is used, so asymmetric ("same" with an even kernel) padding needs nothing more.
struct ConvGeometry {
  int64_t n, c, h, w;       // input
  int64_t oc, oh, ow;       // output
  int64_t kh, kw;           // kernel
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t groups;
  static constexpr int kFields = 16;
  // Reads the fields in the order above from a packed array (the layout src/backend/cpu/conv.ts sends).
  static ConvGeometry From(const double* p) {
    ConvGeometry g;
    int64_t* f[kFields] = {&g.n, &g.c, &g.h, &g.w, &g.oc, &g.oh, &g.ow, &g.kh, &g.kw, &g.sh, &g.sw, &g.ph, &g.pw, &g.dh, &g.dw, &g.groups};
    for (int i = 0; i < kFields; i++) *f[i] = int64_t(p[i]);
    return g;
  }
};

// out [n, oc, oh, ow] = conv(x [n, c, h, w], w [oc, c/groups, kh, kw]) + bias [oc] (bias may be null).
template <class T>
void Conv2dForward(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* out);

// grad_x [n, c, h, w] (overwritten) from grad [n, oc, oh, ow].
template <class T>
void Conv2dBackwardInput(const ConvGeometry& g, const T* grad, const T* w, T* grad_x);

// grad_w [oc, c/groups, kh, kw] and grad_bias [oc] (either may be null), both overwritten.
template <class T>
void Conv2dBackwardWeight(const ConvGeometry& g, const T* grad, const T* x, T* grad_w, T* grad_bias);

}  // namespace rt
