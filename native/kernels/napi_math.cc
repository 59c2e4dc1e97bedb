// N-API entry points for GEMM and the elementwise/strided kernels. Argument orders are mirrored by
// src/backend/cpu/native.ts.
#include "napi_args.h"
#include "napi_register.h"
#include "matmul.h"
#include "rowwise.h"
#include "strided.h"
#include "strided_ops.h"

namespace rt {
namespace {

bool IsFloat(int dtype) { return dtype == kFloat32 || dtype == kFloat64; }

// A layout in a Float64Array: [ndim, offsets x noff, shape x ndim, (strides x ndim) x nstrided].
struct Meta {
  int ndim = 0;
  const double* offsets = nullptr;
  const double* shape = nullptr;
  const double* strides[3] = {};
  bool read(Args& args, size_t i, int noff, int nstrided) {
    Array m = args.array_of(i, kFloat64);
    if (!args.ok()) return false;
    const double* d = m.as<double>();
    if (m.length < 1 || d[0] < 0 || d[0] > kMaxDims) return args.fail("layout has a bad rank"), false;
    ndim = int(d[0]);
    if (m.length < size_t(1 + noff + ndim * (1 + nstrided))) return args.fail("layout array too short"), false;
    offsets = d + 1;
    shape = d + 1 + noff;
    for (int o = 0; o < nstrided; o++) strides[o] = shape + ndim * (1 + o);
    return true;
  }
};

// matmul(a, b, out, params) with params = [batch, m, n, k, aOffset, aRowStride, aColStride,
// aBatchStride, bOffset, bRowStride, bColStride, bBatchStride, outOffset, alpha, beta].
napi_value MatmulFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array a = args.array(0);
  Array b = args.array_of(1, a.dtype), out = args.array_of(2, a.dtype);
  Array pa = args.array_of(3, kFloat64);
  if (!args.ok()) return nullptr;
  if (!IsFloat(a.dtype) || pa.length < 15) return args.fail("matmul needs float arrays and 15 parameters"), nullptr;
  const double* p = pa.as<double>();
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MatmulArgs<T> m;
    m.batch = int64_t(p[0]), m.m = int64_t(p[1]), m.n = int64_t(p[2]), m.k = int64_t(p[3]);
    m.a = a.as<T>() + int64_t(p[4]);
    m.a_row_stride = int64_t(p[5]), m.a_col_stride = int64_t(p[6]), m.a_batch_stride = int64_t(p[7]);
    m.b = b.as<T>() + int64_t(p[8]);
    m.b_row_stride = int64_t(p[9]), m.b_col_stride = int64_t(p[10]), m.b_batch_stride = int64_t(p[11]);
    m.out = out.as<T>() + int64_t(p[12]);
    m.alpha = T(p[13]), m.beta = T(p[14]);
    Matmul(m);
  };
  if (a.dtype == kFloat32) run(static_cast<float*>(nullptr));
  else run(static_cast<double*>(nullptr));
  return nullptr;
}

// unary(op, x, xOffset, out, n, p0, p1)
napi_value UnaryFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array x = args.array(1);
  const int64_t off = args.integer(2);
  Array out = args.array_of(3, x.dtype);
  const int64_t n = args.integer(4);
  const double p0 = args.number(5), p1 = args.number(6);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype) || op < 0 || op >= kUnaryCount) return args.fail("unary needs float arrays and a known op"), nullptr;
  if (x.dtype == kFloat32) Unary<float>(op, x.as<float>() + off, out.as<float>(), n, float(p0), float(p1));
  else Unary<double>(op, x.as<double>() + off, out.as<double>(), n, p0, p1);
  return nullptr;
}

// unaryGrad(op, grad, saved, savedOffset, out, n, p0, p1)
napi_value UnaryGradFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array g = args.array(1);
  Array s = args.array_of(2, g.dtype);
  const int64_t off = args.integer(3);
  Array out = args.array_of(4, g.dtype);
  const int64_t n = args.integer(5);
  const double p0 = args.number(6), p1 = args.number(7);
  if (!args.ok()) return nullptr;
  if (!IsFloat(g.dtype) || op < 0 || op >= kUnaryGradCount) return args.fail("unaryGrad needs float arrays and a known op"), nullptr;
  if (g.dtype == kFloat32) UnaryGrad<float>(op, g.as<float>(), s.as<float>() + off, out.as<float>(), n, float(p0), float(p1));
  else UnaryGrad<double>(op, g.as<double>(), s.as<double>() + off, out.as<double>(), n, p0, p1);
  return nullptr;
}

// binary(op, a, b, out, layout[ndim, aOffset, bOffset, shape, aStrides, bStrides])
napi_value BinaryFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array a = args.array(1);
  Array b = args.array_of(2, a.dtype);
  Array out = args.array_of(3, IsCompare(op) ? int(kBool) : a.dtype);
  Meta m;
  if (!m.read(args, 4, 2, 2)) return nullptr;
  if (!IsFloat(a.dtype) || op < 0 || op >= kBinaryCount) return args.fail("binary needs float arrays and a known op"), nullptr;
  const int64_t oa = int64_t(m.offsets[0]), ob = int64_t(m.offsets[1]);
  if (a.dtype == kFloat32) BinaryStrided<float>(op, a.as<float>() + oa, b.as<float>() + ob, out.data, m.ndim, m.shape, m.strides);
  else BinaryStrided<double>(op, a.as<double>() + oa, b.as<double>() + ob, out.data, m.ndim, m.shape, m.strides);
  return nullptr;
}

// binaryFlat(op, a, aOffset, b, bOffset, out, n): a binary op over one dense run of n elements of
// each operand, without a layout array to read. The same walk as binary's, on a 1-d shape, so the
// results are the same bits; it spares small elementwise ops most of their call overhead.
napi_value BinaryFlatFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array a = args.array(1);
  const int64_t oa = args.integer(2);
  Array b = args.array_of(3, a.dtype);
  const int64_t ob = args.integer(4);
  Array out = args.array_of(5, IsCompare(op) ? int(kBool) : a.dtype);
  const double n = args.number(6);
  if (!args.ok()) return nullptr;
  if (!IsFloat(a.dtype) || op < 0 || op >= kBinaryCount) return args.fail("binaryFlat needs float arrays and a known op"), nullptr;
  if (!(n >= 0) || oa < 0 || ob < 0 || double(oa) + n > double(a.length) || double(ob) + n > double(b.length) || n > double(out.length)) {
    return args.fail("binaryFlat: a run reaches past its array"), nullptr;
  }
  const double shape[1] = {n};
  const double unit[1] = {1};
  const double* strides[2] = {unit, unit};
  if (a.dtype == kFloat32) BinaryStrided<float>(op, a.as<float>() + oa, b.as<float>() + ob, out.data, 1, shape, strides);
  else BinaryStrided<double>(op, a.as<double>() + oa, b.as<double>() + ob, out.data, 1, shape, strides);
  return nullptr;
}

// where(cond, a, b, out, layout[ndim, condOffset, aOffset, bOffset, shape, condStrides, aStrides, bStrides])
napi_value WhereFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array c = args.array_of(0, kBool);
  Array a = args.array(1);
  Array b = args.array_of(2, a.dtype), out = args.array_of(3, a.dtype);
  Meta m;
  if (!m.read(args, 4, 3, 3)) return nullptr;
  const int es = ElementSize(a.dtype);
  const uint8_t* cp = c.as<uint8_t>() + int64_t(m.offsets[0]);
  const char* ap = static_cast<const char*>(a.data) + int64_t(m.offsets[1]) * es;
  const char* bp = static_cast<const char*>(b.data) + int64_t(m.offsets[2]) * es;
  WhereStrided(cp, ap, bp, out.data, es, m.ndim, m.shape, m.strides);
  return nullptr;
}

// copy(src, out, layout[ndim, srcOffset, outOffset, shape, srcStrides])
napi_value CopyFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array src = args.array(0);
  Array out = args.array(1);
  Meta m;
  if (!m.read(args, 2, 2, 1)) return nullptr;
  const char* sp = static_cast<const char*>(src.data) + int64_t(m.offsets[0]) * ElementSize(src.dtype);
  char* op = static_cast<char*>(out.data) + int64_t(m.offsets[1]) * ElementSize(out.dtype);
  if (!CopyStrided(src.dtype, sp, out.dtype, op, m.ndim, m.shape, m.strides[0]))
    return args.fail("copy between unsupported dtypes"), nullptr;
  return nullptr;
}

// reduce(op, x, xOffset, outer, size, inner, out, indices | null)
napi_value ReduceFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int op = int(args.integer(0));
  Array x = args.array(1);
  const int64_t off = args.integer(2), outer = args.integer(3), size = args.integer(4), inner = args.integer(5);
  Array out = args.array_of(6, x.dtype);
  Array idx = args.array_of(7, kInt32, true);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype) || op < 0 || op >= kReduceCount) return args.fail("reduce needs float arrays and a known op"), nullptr;
  if (x.dtype == kFloat32) Reduce<float>(op, x.as<float>() + off, outer, size, inner, out.as<float>(), idx.as<int32_t>());
  else Reduce<double>(op, x.as<double>() + off, outer, size, inner, out.as<double>(), idx.as<int32_t>());
  return nullptr;
}

// sumSquares(x, xOffset, n) -> number
napi_value SumSquaresFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t off = args.integer(1), n = args.integer(2);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype)) return args.fail("sumSquares needs a float array"), nullptr;
  const double s = x.dtype == kFloat32 ? SumSquares<float>(x.as<float>() + off, n) : SumSquares<double>(x.as<double>() + off, n);
  napi_value r;
  napi_create_double(env, s, &r);
  return r;
}

}  // namespace

void RegisterMath(napi_env env, napi_value exports) {
  Define(env, exports, "matmul", MatmulFn);
  Define(env, exports, "unary", UnaryFn);
  Define(env, exports, "unaryGrad", UnaryGradFn);
  Define(env, exports, "binary", BinaryFn);
  Define(env, exports, "binaryFlat", BinaryFlatFn);
  Define(env, exports, "where", WhereFn);
  Define(env, exports, "copy", CopyFn);
  Define(env, exports, "reduce", ReduceFn);
  Define(env, exports, "sumSquares", SumSquaresFn);
}

}  // namespace rt
