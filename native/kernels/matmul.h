#pragma once
#include <cstdint>

#include "kernel_table.h"

namespace rt {

// out[b] = alpha * A[b] @ B[b] + beta * out[b]; out is contiguous [batch, m, n]. Strides in elements;
// a batch stride of 0 broadcasts that operand.
template <class T>
struct MatmulArgs {
  int64_t batch, m, n, k;
  const T* a;
  int64_t a_row_stride, a_col_stride, a_batch_stride;
  const T* b;
  int64_t b_row_stride, b_col_stride, b_batch_stride;
  T* out;
  T alpha, beta;
};

template <class T>
void Matmul(const MatmulArgs<T>& args);

}  // namespace rt
