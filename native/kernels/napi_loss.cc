// N-API entry points of the fused cross-entropy (loss.inl via rowwise.cc). Argument orders are
// mirrored by src/backend/cpu/loss.ts, which checks every bound first.
#include "napi_args.h"
#include "napi_register.h"
#include "rowwise.h"

namespace rt {
namespace {

// crossEntropy(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, loss, stats)
napi_value CrossEntropyFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t off = args.integer(1), rows = args.integer(2), cols = args.integer(3);
  Array t = args.array_of(4, kInt32);
  const int64_t toff = args.integer(5);
  const int32_t ignore = int32_t(args.integer(6));
  const double smoothing = args.number(7);
  Array loss = args.array_of(8, x.dtype), stats = args.array_of(9, x.dtype);
  if (!args.ok()) return nullptr;
  const int32_t* target = t.as<int32_t>() + toff;
  if (x.dtype == kFloat32) CrossEntropy<float>(x.as<float>() + off, rows, cols, target, ignore, float(smoothing), loss.as<float>(), stats.as<float>());
  else if (x.dtype == kFloat64) CrossEntropy<double>(x.as<double>() + off, rows, cols, target, ignore, smoothing, loss.as<double>(), stats.as<double>());
  else return args.fail("crossEntropy needs float arrays"), nullptr;
  return nullptr;
}

// crossEntropyBackward(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, stats, scale, out)
napi_value CrossEntropyBackwardFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t off = args.integer(1), rows = args.integer(2), cols = args.integer(3);
  Array t = args.array_of(4, kInt32);
  const int64_t toff = args.integer(5);
  const int32_t ignore = int32_t(args.integer(6));
  const double smoothing = args.number(7);
  Array stats = args.array_of(8, x.dtype), scale = args.array_of(9, x.dtype), out = args.array_of(10, x.dtype);
  if (!args.ok()) return nullptr;
  const int32_t* target = t.as<int32_t>() + toff;
  if (x.dtype == kFloat32)
    CrossEntropyBackward<float>(x.as<float>() + off, rows, cols, target, ignore, float(smoothing), stats.as<float>(), scale.as<float>(), out.as<float>());
  else if (x.dtype == kFloat64)
    CrossEntropyBackward<double>(x.as<double>() + off, rows, cols, target, ignore, smoothing, stats.as<double>(), scale.as<double>(), out.as<double>());
  else return args.fail("crossEntropyBackward needs float arrays"), nullptr;
  return nullptr;
}

}  // namespace

void RegisterLoss(napi_env env, napi_value exports) {
  Define(env, exports, "crossEntropy", CrossEntropyFn);
  Define(env, exports, "crossEntropyBackward", CrossEntropyBackwardFn);
}

}  // namespace rt
