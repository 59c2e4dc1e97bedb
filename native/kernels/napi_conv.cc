// N-API entry points for convolution, pooling and batch norm's per-channel kernels. Geometries
// travel packed in a Float64Array (field orders in conv.h and pool.h, mirrored by
// src/backend/cpu/conv.ts); TypeScript checks every bound first.
#include "channel_ops.h"
#include "conv.h"
#include "napi_args.h"
#include "napi_register.h"
#include "pool.h"

namespace rt {
namespace {

bool IsFloat(int dtype) { return dtype == kFloat32 || dtype == kFloat64; }

// Reads a packed geometry of at least `fields` numbers.
const double* Geometry(Args& args, size_t i, size_t fields) {
  Array g = args.array_of(i, kFloat64);
  if (args.ok() && g.length < fields) args.fail("a geometry array is too short");
  return args.ok() ? g.as<double>() : nullptr;
}

// conv2d(x, w, bias | null, out, geometry)
napi_value Conv2dFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  Array w = args.array_of(1, x.dtype), b = args.array_of(2, x.dtype, true), out = args.array_of(3, x.dtype);
  const double* geo = Geometry(args, 4, ConvGeometry::kFields);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype)) return args.fail("conv2d needs float arrays"), nullptr;
  const ConvGeometry g = ConvGeometry::From(geo);
  if (x.dtype == kFloat32) Conv2dForward<float>(g, x.as<float>(), w.as<float>(), b.as<float>(), out.as<float>());
  else Conv2dForward<double>(g, x.as<double>(), w.as<double>(), b.as<double>(), out.as<double>());
  return nullptr;
}

// conv2dBackwardInput(grad, w, gradX, geometry)
napi_value Conv2dBackwardInputFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array grad = args.array(0);
  Array w = args.array_of(1, grad.dtype), gx = args.array_of(2, grad.dtype);
  const double* geo = Geometry(args, 3, ConvGeometry::kFields);
  if (!args.ok()) return nullptr;
  if (!IsFloat(grad.dtype)) return args.fail("conv2dBackwardInput needs float arrays"), nullptr;
  const ConvGeometry g = ConvGeometry::From(geo);
  if (grad.dtype == kFloat32) Conv2dBackwardInput<float>(g, grad.as<float>(), w.as<float>(), gx.as<float>());
  else Conv2dBackwardInput<double>(g, grad.as<double>(), w.as<double>(), gx.as<double>());
  return nullptr;
}

// conv2dBackwardWeight(grad, x, gradW | null, gradBias | null, geometry)
napi_value Conv2dBackwardWeightFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array grad = args.array(0);
  Array x = args.array_of(1, grad.dtype), gw = args.array_of(2, grad.dtype, true), gb = args.array_of(3, grad.dtype, true);
  const double* geo = Geometry(args, 4, ConvGeometry::kFields);
  if (!args.ok()) return nullptr;
  if (!IsFloat(grad.dtype)) return args.fail("conv2dBackwardWeight needs float arrays"), nullptr;
  const ConvGeometry g = ConvGeometry::From(geo);
  if (grad.dtype == kFloat32) Conv2dBackwardWeight<float>(g, grad.as<float>(), x.as<float>(), gw.as<float>(), gb.as<float>());
  else Conv2dBackwardWeight<double>(g, grad.as<double>(), x.as<double>(), gw.as<double>(), gb.as<double>());
  return nullptr;
}

// maxPool2d(x, out, indices, geometry)
napi_value MaxPool2dFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  Array out = args.array_of(1, x.dtype), idx = args.array_of(2, kInt32);
  const double* geo = Geometry(args, 3, MaxPoolGeometry::kFields);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype)) return args.fail("maxPool2d needs float arrays"), nullptr;
  const MaxPoolGeometry g = MaxPoolGeometry::From(geo);
  if (x.dtype == kFloat32) MaxPool2d<float>(g, x.as<float>(), out.as<float>(), idx.as<int32_t>());
  else MaxPool2d<double>(g, x.as<double>(), out.as<double>(), idx.as<int32_t>());
  return nullptr;
}

// avgPool2d(backward, src, dst, hStart, hEnd, wStart, wEnd, divisors, sizes [planes, h, w, oh, ow])
napi_value AvgPool2dFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const bool backward = args.boolean(0);
  Array src = args.array(1);
  Array dst = args.array_of(2, src.dtype);
  Array hs = args.array_of(3, kInt32), he = args.array_of(4, kInt32), ws = args.array_of(5, kInt32), we = args.array_of(6, kInt32);
  Array div = args.array_of(7, kFloat64);
  const double* sizes = Geometry(args, 8, 5);
  if (!args.ok()) return nullptr;
  if (!IsFloat(src.dtype)) return args.fail("avgPool2d needs float arrays"), nullptr;
  const AvgPoolWindows g{int64_t(sizes[0]), int64_t(sizes[1]), int64_t(sizes[2]), int64_t(sizes[3]), int64_t(sizes[4]),
                         hs.as<int32_t>(), he.as<int32_t>(), ws.as<int32_t>(), we.as<int32_t>(), div.as<double>()};
  if (src.dtype == kFloat32) {
    if (backward) AvgPool2dBackward<float>(g, src.as<float>(), dst.as<float>());
    else AvgPool2d<float>(g, src.as<float>(), dst.as<float>());
  } else {
    if (backward) AvgPool2dBackward<double>(g, src.as<double>(), dst.as<double>());
    else AvgPool2d<double>(g, src.as<double>(), dst.as<double>());
  }
  return nullptr;
}

// channelSums(a, b | null, n, c, l, sumA, sumAB)
napi_value ChannelSumsFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array a = args.array(0);
  Array b = args.array_of(1, a.dtype, true);
  const int64_t n = args.integer(2), c = args.integer(3), l = args.integer(4);
  Array sa = args.array_of(5, kFloat64), sab = args.array_of(6, kFloat64);
  if (!args.ok()) return nullptr;
  if (!IsFloat(a.dtype)) return args.fail("channelSums needs float arrays"), nullptr;
  if (a.dtype == kFloat32) ChannelSums<float>(a.as<float>(), b.as<float>(), n, c, l, sa.as<double>(), sab.as<double>());
  else ChannelSums<double>(a.as<double>(), b.as<double>(), n, c, l, sa.as<double>(), sab.as<double>());
  return nullptr;
}

// channelAffine(a, b | null, n, c, l, sa, sb | null, shift, out)
napi_value ChannelAffineFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array a = args.array(0);
  Array b = args.array_of(1, a.dtype, true);
  const int64_t n = args.integer(2), c = args.integer(3), l = args.integer(4);
  Array sa = args.array_of(5, kFloat64), sb = args.array_of(6, kFloat64, true), shift = args.array_of(7, kFloat64);
  Array out = args.array_of(8, a.dtype);
  if (!args.ok()) return nullptr;
  if (!IsFloat(a.dtype)) return args.fail("channelAffine needs float arrays"), nullptr;
  if ((b.data == nullptr) != (sb.data == nullptr)) return args.fail("channelAffine takes b and sb together"), nullptr;
  if (a.dtype == kFloat32)
    ChannelAffine<float>(a.as<float>(), b.as<float>(), n, c, l, sa.as<double>(), sb.as<double>(), shift.as<double>(), out.as<float>());
  else
    ChannelAffine<double>(a.as<double>(), b.as<double>(), n, c, l, sa.as<double>(), sb.as<double>(), shift.as<double>(), out.as<double>());
  return nullptr;
}

}  // namespace

void RegisterConv(napi_env env, napi_value exports) {
  Define(env, exports, "conv2d", Conv2dFn);
  Define(env, exports, "conv2dBackwardInput", Conv2dBackwardInputFn);
  Define(env, exports, "conv2dBackwardWeight", Conv2dBackwardWeightFn);
  Define(env, exports, "maxPool2d", MaxPool2dFn);
  Define(env, exports, "avgPool2d", AvgPool2dFn);
  Define(env, exports, "channelSums", ChannelSumsFn);
  Define(env, exports, "channelAffine", ChannelAffineFn);
}

}  // namespace rt
