// Walking N-d strided views row by row. The layout comes from TypeScript as doubles (shape and
// strides in elements); dims of size 1 are dropped and dims that are contiguous in every operand
// are merged, so most walks end up as a few long runs.
#pragma once
#include <cstdint>

namespace rt {

constexpr int kMaxDims = 32;

template <int N>
struct Walk {
  int ndim = 1;
  int64_t shape[kMaxDims] = {1};
  int64_t strides[N][kMaxDims] = {};

  // shape[ndim] and strides[op][ndim] as sent from TypeScript.
  void init(int nd, const double* shp, const double* const* strd) {
    ndim = 0;
    for (int d = 0; d < nd; d++) {
      if (shp[d] == 1) continue;
      shape[ndim] = int64_t(shp[d]);
      for (int o = 0; o < N; o++) strides[o][ndim] = int64_t(strd[o][d]);
      if (shape[ndim] == 0) {
        ndim = 1;
        shape[0] = 0;
        return;
      }
      if (ndim > 0 && mergeable(ndim - 1)) {
        for (int o = 0; o < N; o++) strides[o][ndim - 1] = strides[o][ndim];
        shape[ndim - 1] *= shape[ndim];
        continue;
      }
      ndim++;
    }
    if (ndim == 0) {
      ndim = 1;
      shape[0] = 1;
      for (int o = 0; o < N; o++) strides[o][0] = 0;
    }
  }

  int64_t inner() const { return shape[ndim - 1]; }
  int64_t rows() const {
    int64_t r = 1;
    for (int d = 0; d + 1 < ndim; d++) r *= shape[d];
    return r;
  }
  int64_t inner_stride(int o) const { return strides[o][ndim - 1]; }

  // f(row, offsets) for rows [r0, r1), offsets[o] = element offset of the row's start in operand o.
  template <class F>
  void for_rows(int64_t r0, int64_t r1, F f) const {
    if (r0 >= r1) return;
    const int outer = ndim - 1;
    int64_t idx[kMaxDims] = {};
    int64_t off[N] = {};
    int64_t rem = r0;
    for (int d = outer - 1; d >= 0; d--) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      for (int o = 0; o < N; o++) off[o] += idx[d] * strides[o][d];
    }
    for (int64_t r = r0; r < r1; r++) {
      f(r, off);
      for (int d = outer - 1; d >= 0; d--) {
        for (int o = 0; o < N; o++) off[o] += strides[o][d];
        if (++idx[d] < shape[d]) break;
        for (int o = 0; o < N; o++) off[o] -= idx[d] * strides[o][d];
        idx[d] = 0;
      }
    }
  }

 private:
  // Whether dim d and the next one (at index d+1, not yet counted) read as one dim in every operand.
  bool mergeable(int d) const {
    for (int o = 0; o < N; o++)
      if (strides[o][d] != strides[o][d + 1] * shape[d + 1]) return false;
    return true;
  }
};

}  // namespace rt
