// Batch norm's per-channel sums and affine maps, parallel over channels (sums) or rows (affine).
#include "channel_ops.h"

#include "thread_pool.h"

namespace rt {

template <class T>
void ChannelSums(const T* a, const T* b, int64_t n, int64_t c, int64_t l, double* sum_a, double* sum_ab) {
  ParallelRange(c, double(n * l), [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ch++) {
      double s = 0, sp = 0;
      for (int64_t i = 0; i < n; i++) {
        const T* x = a + (i * c + ch) * l;
        const T* y = b ? b + (i * c + ch) * l : x;
        // Double throughout: the variance is E[x²] − E[x]², which cancels when the mean is large.
        for (int64_t j = 0; j < l; j++) {
          s += double(x[j]);
          sp += double(x[j]) * double(y[j]);
        }
      }
      sum_a[ch] = s, sum_ab[ch] = sp;
    }
  });
}

template <class T>
void ChannelAffine(const T* a, const T* b, int64_t n, int64_t c, int64_t l, const double* sa, const double* sb,
                   const double* shift, T* out) {
  ParallelRange(n * c, double(l), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
      const int64_t ch = r % c;
      const T* x = a + r * l;
      T* o = out + r * l;
      const T p = T(sa[ch]), q = T(shift[ch]);
      if (b) {
        const T* y = b + r * l;
        const T s = T(sb[ch]);
        for (int64_t j = 0; j < l; j++) o[j] = x[j] * p + y[j] * s + q;
      } else {
        for (int64_t j = 0; j < l; j++) o[j] = x[j] * p + q;
      }
    }
  });
}

template void ChannelSums<float>(const float*, const float*, int64_t, int64_t, int64_t, double*, double*);
template void ChannelSums<double>(const double*, const double*, int64_t, int64_t, int64_t, double*, double*);
template void ChannelAffine<float>(const float*, const float*, int64_t, int64_t, int64_t, const double*, const double*, const double*, float*);
template void ChannelAffine<double>(const double*, const double*, int64_t, int64_t, int64_t, const double*, const double*, const double*, double*);

}  // namespace rt
