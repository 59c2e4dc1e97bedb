#pragma once
#include <cstdint>

namespace rt {

// The Backend's index kernels over contiguous [outer, size, inner] blocks (see backend.ts). The
// data-moving ones work on any dtype by element size; the accumulating ones take a DType code and
// return false for a dtype they cannot add (bfloat16, bool).

// Whether every index lies in [0, size): checked before any kernel runs, since an index is the one
// argument TypeScript cannot bound in O(1).
bool IndicesInRange(const int32_t* index, int64_t n, int64_t size);

void IndexSelect(const void* x, int element_size, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
                 int64_t k, void* out);
bool IndexAdd(int dtype, const void* grad, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
              int64_t k, void* out);
void Gather(const void* x, int element_size, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
            int64_t k, void* out);
bool ScatterAdd(int dtype, const void* src, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
                int64_t k, void* out);
void Triangle(const void* x, int element_size, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
              void* out);

}  // namespace rt
