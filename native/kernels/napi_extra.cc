// N-API entry points for the kernels added with the everyday ops: transcendental functions,
// atan2, sort, cumulative sums/products and scatter with a reduction. They are scalar loops (std::
// math is already accurate to an ulp; none of these sits on a training hot path). Argument orders
// are mirrored by src/backend/cpu/native.ts; TypeScript checks every bound first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "napi_args.h"
#include "napi_register.h"

namespace rt {
namespace {

// Mirrors MATH_OPS in src/backend/cpu/opcodes.ts.
enum MathOp { kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh, kLog1p, kExpm1, kMathCount };
enum ScatterOp { kAssign, kSum, kProd, kAmax, kAmin, kScatterCount };

template <class T>
T ApplyMath(int op, T x) {
  switch (op) {
    case kSin: return std::sin(x);
    case kCos: return std::cos(x);
    case kTan: return std::tan(x);
    case kAsin: return std::asin(x);
    case kAcos: return std::acos(x);
    case kAtan: return std::atan(x);
    case kSinh: return std::sinh(x);
    case kCosh: return std::cosh(x);
    case kAsinh: return std::asinh(x);
    case kAcosh: return std::acosh(x);
    case kAtanh: return std::atanh(x);
    case kLog1p: return std::log1p(x);
    default: return std::expm1(x);
  }
}

// unaryMath(op, x, xOffset, out, n)
napi_value UnaryMathFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array x = args.array(1);
  const int64_t off = args.integer(2);
  Array out = args.array_of(3, x.dtype);
  const int64_t n = args.integer(4);
  if (!args.ok()) return nullptr;
  if ((x.dtype != kFloat32 && x.dtype != kFloat64) || op < 0 || op >= kMathCount) return args.fail("unaryMath needs float arrays and a known op"), nullptr;
  if (x.dtype == kFloat32) {
    const float* s = x.as<float>() + off;
    float* d = out.as<float>();
    for (int64_t i = 0; i < n; i++) d[i] = ApplyMath<float>(op, s[i]);
  } else {
    const double* s = x.as<double>() + off;
    double* d = out.as<double>();
    for (int64_t i = 0; i < n; i++) d[i] = ApplyMath<double>(op, s[i]);
  }
  return nullptr;
}

// atan2(a, aOffset, b, bOffset, out, n)
napi_value Atan2Fn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array a = args.array(0);
  const int64_t ao = args.integer(1);
  Array b = args.array_of(2, a.dtype);
  const int64_t bo = args.integer(3);
  Array out = args.array_of(4, a.dtype);
  const int64_t n = args.integer(5);
  if (!args.ok()) return nullptr;
  if (a.dtype != kFloat32 && a.dtype != kFloat64) return args.fail("atan2 needs float arrays"), nullptr;
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pa = a.as<T>() + ao;
    const T* pb = b.as<T>() + bo;
    T* d = out.as<T>();
    for (int64_t i = 0; i < n; i++) d[i] = std::atan2(pa[i], pb[i]);
  };
  if (a.dtype == kFloat32) run(static_cast<float*>(nullptr));
  else run(static_cast<double*>(nullptr));
  return nullptr;
}

template <class T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

template <class T>
void SortAs(const T* x, int64_t outer, int64_t size, int64_t inner, bool descending, T* values, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(size));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const T* row = x + o * size * inner + i;
      std::iota(order.begin(), order.end(), 0);
      // NaN sorts above every number (last ascending, first descending); stable keeps ties in order.
      auto less = [&](int32_t p, int32_t q) {
        const T u = row[int64_t(p) * inner], v = row[int64_t(q) * inner];
        return !IsNan(u) && (IsNan(v) || u < v);
      };
      if (descending) std::stable_sort(order.begin(), order.end(), [&](int32_t p, int32_t q) { return less(q, p); });
      else std::stable_sort(order.begin(), order.end(), less);
      for (int64_t j = 0; j < size; j++) {
        const int64_t at = (o * size + j) * inner + i;
        values[at] = row[int64_t(order[size_t(j)]) * inner];
        indices[at] = order[size_t(j)];
      }
    }
}

// sort(x, xOffset, outer, size, inner, descending, values, indices)
napi_value SortFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t off = args.integer(1), outer = args.integer(2), size = args.integer(3), inner = args.integer(4);
  const bool descending = args.boolean(5);
  Array values = args.array_of(6, x.dtype);
  Array indices = args.array_of(7, kInt32);
  if (!args.ok()) return nullptr;
  switch (x.dtype) {
    case kFloat32: SortAs<float>(x.as<float>() + off, outer, size, inner, descending, values.as<float>(), indices.as<int32_t>()); break;
    case kFloat64: SortAs<double>(x.as<double>() + off, outer, size, inner, descending, values.as<double>(), indices.as<int32_t>()); break;
    case kInt32: SortAs<int32_t>(x.as<int32_t>() + off, outer, size, inner, descending, values.as<int32_t>(), indices.as<int32_t>()); break;
    default: return args.fail("sort needs float32, float64 or int32 arrays"), nullptr;
  }
  return nullptr;
}

// Integers wrap on overflow (two's complement), as the reference backend's Int32Array stores do.
int32_t WrapAdd(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
int32_t WrapMul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }
float WrapAdd(float a, float b) { return a + b; }
float WrapMul(float a, float b) { return a * b; }
double WrapAdd(double a, double b) { return a + b; }
double WrapMul(double a, double b) { return a * b; }

template <class T>
void CumulativeAs(bool prod, const T* x, int64_t outer, int64_t size, int64_t inner, T* out) {
  // PyTorch's cpu cumsum/cumprod accumulate floats in double (its acc_type) and round each output.
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      Acc acc = prod ? Acc(1) : Acc(0);
      for (int64_t j = 0; j < size; j++) {
        const int64_t at = (o * size + j) * inner + i;
        acc = prod ? WrapMul(acc, Acc(x[at])) : WrapAdd(acc, Acc(x[at]));
        out[at] = T(acc);
      }
    }
}

// cumulative(prod, x, xOffset, outer, size, inner, out)
napi_value CumulativeFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const bool prod = args.boolean(0);
  Array x = args.array(1);
  const int64_t off = args.integer(2), outer = args.integer(3), size = args.integer(4), inner = args.integer(5);
  Array out = args.array_of(6, x.dtype);
  if (!args.ok()) return nullptr;
  switch (x.dtype) {
    case kFloat32: CumulativeAs<float>(prod, x.as<float>() + off, outer, size, inner, out.as<float>()); break;
    case kFloat64: CumulativeAs<double>(prod, x.as<double>() + off, outer, size, inner, out.as<double>()); break;
    case kInt32: CumulativeAs<int32_t>(prod, x.as<int32_t>() + off, outer, size, inner, out.as<int32_t>()); break;
    default: return args.fail("cumulative needs float32, float64 or int32 arrays"), nullptr;
  }
  return nullptr;
}

template <class T>
void ScatterAs(int op, const T* src, int64_t outer, int64_t size, int64_t inner, const int32_t* index, int64_t k, T* out) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < k; j++)
      for (int64_t i = 0; i < inner; i++) {
        const int64_t at = (o * k + j) * inner + i;
        T& d = out[(o * size + int64_t(index[at])) * inner + i];
        const T s = src[at];
        switch (op) {
          case kAssign: d = s; break;
          case kSum: d = WrapAdd(d, s); break;
          case kProd: d = WrapMul(d, s); break;
          // NaN wins either way, as in PyTorch's scatter_reduce.
          case kAmax: if (IsNan(s) || s > d) d = s; break;
          default: if (IsNan(s) || s < d) d = s; break;
        }
      }
}

// scatterReduce(op, src, outer, size, inner, index, k, out)
napi_value ScatterReduceFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array src = args.array(1);
  const int64_t outer = args.integer(2), size = args.integer(3), inner = args.integer(4);
  Array index = args.array_of(5, kInt32);
  const int64_t k = args.integer(6);
  Array out = args.array_of(7, src.dtype);
  if (!args.ok()) return nullptr;
  if (op < 0 || op >= kScatterCount) return args.fail("scatterReduce needs a known op"), nullptr;
  const int32_t* idx = index.as<int32_t>();
  switch (src.dtype) {
    case kFloat32: ScatterAs<float>(op, src.as<float>(), outer, size, inner, idx, k, out.as<float>()); break;
    case kFloat64: ScatterAs<double>(op, src.as<double>(), outer, size, inner, idx, k, out.as<double>()); break;
    case kInt32: ScatterAs<int32_t>(op, src.as<int32_t>(), outer, size, inner, idx, k, out.as<int32_t>()); break;
    default: return args.fail("scatterReduce needs float32, float64 or int32 arrays"), nullptr;
  }
  return nullptr;
}

}  // namespace

void RegisterExtra(napi_env env, napi_value exports) {
  Define(env, exports, "unaryMath", UnaryMathFn);
  Define(env, exports, "atan2", Atan2Fn);
  Define(env, exports, "sort", SortFn);
  Define(env, exports, "cumulative", CumulativeFn);
  Define(env, exports, "scatterReduce", ScatterReduceFn);
}

}  // namespace rt
