// Elementwise ops over strided views: copy (with dtype conversion), where, and the N-d walk of
// binary ops (whose rows run on the ISA kernels).
#include "strided_ops.h"

#include <cstring>

#include "dispatch.h"
#include "dtype.h"
#include "strided.h"
#include "thread_pool.h"

namespace rt {
namespace {

using RowFn = void (*)(const void* src, int64_t stride, void* dst, int64_t n);

template <class S, class D>
void ConvertRow(const void* src, int64_t stride, void* dst, int64_t n) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  if (stride == 1) {
    for (int64_t i = 0; i < n; i++) d[i] = Store<D>::from(Load(s[i]));
  } else {
    for (int64_t i = 0; i < n; i++) d[i] = Store<D>::from(Load(s[i * stride]));
  }
}

// Same dtype: move the stored bits untouched (NaN payloads and bfloat16 survive).
template <class E>
void MoveRow(const void* src, int64_t stride, void* dst, int64_t n) {
  const E* s = static_cast<const E*>(src);
  E* d = static_cast<E*>(dst);
  if (stride == 1) {
    std::memcpy(d, s, size_t(n) * sizeof(E));
  } else if (stride == 0) {
    for (int64_t i = 0; i < n; i++) d[i] = s[0];
  } else {
    for (int64_t i = 0; i < n; i++) d[i] = s[i * stride];
  }
}

template <class S>
RowFn RowTo(int dst) {
  switch (dst) {
    case kFloat32: return &ConvertRow<S, float>;
    case kFloat64: return &ConvertRow<S, double>;
    case kInt32: return &ConvertRow<S, int32_t>;
    case kBFloat16: return &ConvertRow<S, BF16>;
    case kBool: return &ConvertRow<S, Bool>;
    default: return nullptr;
  }
}

RowFn RowFor(int src, int dst) {
  if (src == dst) {
    switch (ElementSize(src)) {
      case 1: return &MoveRow<uint8_t>;
      case 2: return &MoveRow<uint16_t>;
      case 4: return &MoveRow<uint32_t>;
      case 8: return &MoveRow<uint64_t>;
      default: return nullptr;
    }
  }
  switch (src) {
    case kFloat32: return RowTo<float>(dst);
    case kFloat64: return RowTo<double>(dst);
    case kInt32: return RowTo<int32_t>(dst);
    case kBFloat16: return RowTo<BF16>(dst);
    case kBool: return RowTo<Bool>(dst);
    default: return nullptr;
  }
}

template <class E>
void WhereRows(const Walk<3>& w, const uint8_t* cond, const E* a, const E* b, E* out) {
  const int64_t n = w.inner();
  const int64_t sc = w.inner_stride(0), sa = w.inner_stride(1), sb = w.inner_stride(2);
  ParallelRange(w.rows(), double(n), [&](int64_t r0, int64_t r1) {
    w.for_rows(r0, r1, [&](int64_t r, const int64_t* off) {
      const uint8_t* c = cond + off[0];
      const E* x = a + off[1];
      const E* y = b + off[2];
      E* o = out + r * n;
      for (int64_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sa] : y[i * sb];
    });
  });
}

}  // namespace

bool CopyStrided(int src_dtype, const void* src, int dst_dtype, void* dst, int ndim, const double* shape,
                 const double* strides) {
  const RowFn row = RowFor(src_dtype, dst_dtype);
  if (!row) return false;
  Walk<1> w;
  w.init(ndim, shape, &strides);
  const int64_t n = w.inner(), ss = w.inner_stride(0);
  const int src_size = ElementSize(src_dtype), dst_size = ElementSize(dst_dtype);
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  ParallelRange(w.rows(), double(n) * 0.25, [&](int64_t r0, int64_t r1) {
    w.for_rows(r0, r1, [&](int64_t r, const int64_t* off) { row(s + off[0] * src_size, ss, d + r * n * dst_size, n); });
  });
  return true;
}

bool WhereStrided(const uint8_t* cond, const void* a, const void* b, void* out, int element_size, int ndim,
                  const double* shape, const double* const* strides) {
  Walk<3> w;
  w.init(ndim, shape, strides);
  switch (element_size) {
    case 1: WhereRows(w, cond, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), static_cast<uint8_t*>(out)); return true;
    case 2: WhereRows(w, cond, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<uint16_t*>(out)); return true;
    case 4: WhereRows(w, cond, static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), static_cast<uint32_t*>(out)); return true;
    case 8: WhereRows(w, cond, static_cast<const uint64_t*>(a), static_cast<const uint64_t*>(b), static_cast<uint64_t*>(out)); return true;
    default: return false;
  }
}

template <class T>
void BinaryStrided(int op, const T* a, const T* b, void* out, int ndim, const double* shape,
                   const double* const* strides) {
  Walk<2> w;
  w.init(ndim, shape, strides);
  const TypedKernels<T>& K = Kernels().get<T>();
  const int64_t n = w.inner(), sa = w.inner_stride(0), sb = w.inner_stride(1);
  const bool cmp = IsCompare(op);
  const double cost = op == kPow ? 8.0 : 1.0;
  auto rows = [&](int64_t r0, int64_t r1) {
    w.for_rows(r0, r1, [&](int64_t r, const int64_t* off) {
      if (cmp)
        K.compare(op, a + off[0], sa, b + off[1], sb, static_cast<uint8_t*>(out) + r * n, n);
      else
        K.binary(op, a + off[0], sa, b + off[1], sb, static_cast<T*>(out) + r * n, n);
    });
  };
  const int64_t nrows = w.rows();
  if (nrows >= GetNumThreads() || GetNumThreads() == 1) {
    ParallelRange(nrows, double(n) * cost, rows);
    return;
  }
  // Few long rows (a contiguous op): split the row itself.
  ParallelRange(n, double(nrows) * cost, [&](int64_t i0, int64_t i1) {
    w.for_rows(0, nrows, [&](int64_t r, const int64_t* off) {
      if (cmp)
        K.compare(op, a + off[0] + i0 * sa, sa, b + off[1] + i0 * sb, sb, static_cast<uint8_t*>(out) + r * n + i0, i1 - i0);
      else
        K.binary(op, a + off[0] + i0 * sa, sa, b + off[1] + i0 * sb, sb, static_cast<T*>(out) + r * n + i0, i1 - i0);
    });
  });
}

template void BinaryStrided<float>(int, const float*, const float*, void*, int, const double*, const double* const*);
template void BinaryStrided<double>(int, const double*, const double*, void*, int, const double*, const double* const*);

}  // namespace rt
