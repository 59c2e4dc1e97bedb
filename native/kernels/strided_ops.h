#pragma once
#include <cstdint>

namespace rt {

// Each takes the logical shape[ndim] and, per operand, strides[ndim] in elements from an operand
// pointer that already includes its offset; the output is contiguous.

// Gathers src into dst converting dtypes (DType codes); false if a dtype is unknown.
bool CopyStrided(int src_dtype, const void* src, int dst_dtype, void* dst, int ndim, const double* shape,
                 const double* strides);

// out = cond ? a : b; strides[0..2] are cond's, a's and b's. False for an unsupported element size.
bool WhereStrided(const uint8_t* cond, const void* a, const void* b, void* out, int element_size, int ndim,
                  const double* shape, const double* const* strides);

// out (T, or uint8 for comparisons) = a op b; strides[0..1] are a's and b's.
template <class T>
void BinaryStrided(int op, const T* a, const T* b, void* out, int ndim, const double* shape,
                   const double* const* strides);

}  // namespace rt
