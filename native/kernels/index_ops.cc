#include "index_ops.h"

#include <algorithm>
#include <cstring>

#include "dtype.h"
#include "thread_pool.h"

namespace rt {
namespace {

template <class E>
void GatherAs(const E* x, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, E* out) {
  ParallelRange(outer, double(k * inner), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; o++) {
      const E* xo = x + o * size * inner;
      const int32_t* io = index + o * k * inner;
      E* oo = out + o * k * inner;
      for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < inner; i++) oo[j * inner + i] = xo[int64_t(io[j * inner + i]) * inner + i];
    }
  });
}

template <class T>
void IndexAddAs(const T* grad, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, T* out) {
  if (inner == 1) {
    for (int64_t o = 0; o < outer; o++) {
      const T* g = grad + o * k;
      T* dst = out + o * size;
      for (int64_t j = 0; j < k; j++) dst[index[j]] += g[j];
    }
    return;
  }
  // Split along inner only: two threads never add into the same element, whatever the indices.
  ParallelRange(inner, double(outer * k), [&](int64_t i0, int64_t i1) {
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < k; j++) {
        const T* g = grad + (o * k + j) * inner;
        T* dst = out + (o * size + index[j]) * inner;
        for (int64_t i = i0; i < i1; i++) dst[i] += g[i];
      }
  });
}

template <class T>
void ScatterAddAs(const T* src, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, T* out) {
  for (int64_t o = 0; o < outer; o++) {
    const T* so = src + o * k * inner;
    const int32_t* io = index + o * k * inner;
    T* oo = out + o * size * inner;
    for (int64_t j = 0; j < k; j++)
      for (int64_t i = 0; i < inner; i++) oo[int64_t(io[j * inner + i]) * inner + i] += so[j * inner + i];
  }
}

template <template <class> class F, class... Args>
bool ForAddable(int dtype, Args&&... args) {
  switch (dtype) {
    case kFloat32: F<float>::run(args...); return true;
    case kFloat64: F<double>::run(args...); return true;
    case kInt32: F<int32_t>::run(args...); return true;
    default: return false;
  }
}

template <class T>
struct IndexAddFn {
  static void run(const void* g, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, void* out) {
    IndexAddAs(static_cast<const T*>(g), outer, size, inner, index, k, static_cast<T*>(out));
  }
};
template <class T>
struct ScatterAddFn {
  static void run(const void* s, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, void* out) {
    ScatterAddAs(static_cast<const T*>(s), outer, size, inner, index, k, static_cast<T*>(out));
  }
};

}  // namespace

bool IndicesInRange(const int32_t* index, int64_t n, int64_t size) {
  // Branch-free so it vectorises: an unsigned compare catches negatives too.
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad |= uint32_t(uint64_t(uint32_t(index[i])) >= uint64_t(size));
  return bad == 0;
}

void IndexSelect(const void* x, int element_size, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
                 int64_t k, void* out) {
  const size_t row = size_t(inner) * element_size;
  const char* xs = static_cast<const char*>(x);
  char* os = static_cast<char*>(out);
  ParallelRange(outer * k, double(inner) * element_size / 4, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
      const int64_t o = r / k, j = r % k;
      std::memcpy(os + r * row, xs + (o * size + index[j]) * row, row);
    }
  });
}

bool IndexAdd(int dtype, const void* grad, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
              int64_t k, void* out) {
  return ForAddable<IndexAddFn>(dtype, grad, outer, size, inner, index, k, out);
}

void Gather(const void* x, int element_size, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
            int64_t k, void* out) {
  switch (element_size) {
    case 1: return GatherAs(static_cast<const uint8_t*>(x), outer, size, inner, index, k, static_cast<uint8_t*>(out));
    case 2: return GatherAs(static_cast<const uint16_t*>(x), outer, size, inner, index, k, static_cast<uint16_t*>(out));
    case 4: return GatherAs(static_cast<const uint32_t*>(x), outer, size, inner, index, k, static_cast<uint32_t*>(out));
    case 8: return GatherAs(static_cast<const uint64_t*>(x), outer, size, inner, index, k, static_cast<uint64_t*>(out));
    default: return;
  }
}

bool ScatterAdd(int dtype, const void* src, int64_t outer, int64_t size, int64_t inner, const int32_t* index,
                int64_t k, void* out) {
  return ForAddable<ScatterAddFn>(dtype, src, outer, size, inner, index, k, out);
}

void Triangle(const void* x, int element_size, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
              void* out) {
  const char* xs = static_cast<const char*>(x);
  char* os = static_cast<char*>(out);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t r = 0; r < rows; r++) {
      // Keep columns c with c - r >= diagonal (upper) or c - r <= diagonal (lower).
      const int64_t edge = std::clamp<int64_t>(r + diagonal + (upper ? 0 : 1), 0, cols);
      const int64_t keep0 = upper ? edge : 0, keep1 = upper ? cols : edge;
      const size_t base = size_t((b * rows + r) * cols) * element_size;
      std::memset(os + base, 0, size_t(cols) * element_size);
      if (keep1 > keep0)
        std::memcpy(os + base + keep0 * element_size, xs + base + keep0 * element_size, size_t(keep1 - keep0) * element_size);
    }
}

}  // namespace rt
