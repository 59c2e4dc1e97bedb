// N-API entry points for the row-wise nn kernels, the index kernels and the optimizer updates.
// Argument orders are mirrored by src/backend/cpu/native.ts.
#include "index_ops.h"
#include "napi_args.h"
#include "napi_register.h"
#include "rowwise.h"

namespace rt {
namespace {

bool IsFloat(int dtype) { return dtype == kFloat32 || dtype == kFloat64; }

// softmax(x, xOffset, rows, cols, log, out)
napi_value SoftmaxFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t off = args.integer(1), rows = args.integer(2), cols = args.integer(3);
  const bool log = args.boolean(4);
  Array out = args.array_of(5, x.dtype);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype)) return args.fail("softmax needs float arrays"), nullptr;
  if (x.dtype == kFloat32) Softmax<float>(x.as<float>() + off, out.as<float>(), rows, cols, log);
  else Softmax<double>(x.as<double>() + off, out.as<double>(), rows, cols, log);
  return nullptr;
}

// softmaxBackward(grad, y, rows, cols, log, out)
napi_value SoftmaxBackwardFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array g = args.array(0);
  Array y = args.array_of(1, g.dtype);
  const int64_t rows = args.integer(2), cols = args.integer(3);
  const bool log = args.boolean(4);
  Array out = args.array_of(5, g.dtype);
  if (!args.ok()) return nullptr;
  if (!IsFloat(g.dtype)) return args.fail("softmaxBackward needs float arrays"), nullptr;
  if (g.dtype == kFloat32) SoftmaxBackward<float>(g.as<float>(), y.as<float>(), out.as<float>(), rows, cols, log);
  else SoftmaxBackward<double>(g.as<double>(), y.as<double>(), out.as<double>(), rows, cols, log);
  return nullptr;
}

// layerNorm(x, rows, cols, weight | null, bias | null, eps, out, mean, rstd)
napi_value LayerNormFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t rows = args.integer(1), cols = args.integer(2);
  Array w = args.array_of(3, x.dtype, true), b = args.array_of(4, x.dtype, true);
  const double eps = args.number(5);
  Array out = args.array_of(6, x.dtype), mean = args.array_of(7, x.dtype), rstd = args.array_of(8, x.dtype);
  if (!args.ok()) return nullptr;
  if (!IsFloat(x.dtype)) return args.fail("layerNorm needs float arrays"), nullptr;
  if (x.dtype == kFloat32)
    LayerNorm<float>(x.as<float>(), rows, cols, w.as<float>(), b.as<float>(), float(eps), out.as<float>(), mean.as<float>(), rstd.as<float>());
  else
    LayerNorm<double>(x.as<double>(), rows, cols, w.as<double>(), b.as<double>(), eps, out.as<double>(), mean.as<double>(), rstd.as<double>());
  return nullptr;
}

// layerNormBackward(grad, x, rows, cols, weight | null, mean, rstd, gradX, gradWeight | null, gradBias | null)
napi_value LayerNormBackwardFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array g = args.array(0);
  Array x = args.array_of(1, g.dtype);
  const int64_t rows = args.integer(2), cols = args.integer(3);
  Array w = args.array_of(4, g.dtype, true), mean = args.array_of(5, g.dtype), rstd = args.array_of(6, g.dtype);
  Array gx = args.array_of(7, g.dtype), gw = args.array_of(8, g.dtype, true), gb = args.array_of(9, g.dtype, true);
  if (!args.ok()) return nullptr;
  if (!IsFloat(g.dtype)) return args.fail("layerNormBackward needs float arrays"), nullptr;
  if (g.dtype == kFloat32)
    LayerNormBackward<float>(g.as<float>(), x.as<float>(), rows, cols, w.as<float>(), mean.as<float>(), rstd.as<float>(),
                             gx.as<float>(), gw.as<float>(), gb.as<float>());
  else
    LayerNormBackward<double>(g.as<double>(), x.as<double>(), rows, cols, w.as<double>(), mean.as<double>(),
                              rstd.as<double>(), gx.as<double>(), gw.as<double>(), gb.as<double>());
  return nullptr;
}

// indexSelect / indexAdd (x, outer, size, inner, index, out) and gather / scatterAdd
// (x, outer, size, inner, index, k, out). `adds` picks the accumulating adjoint; `per_element`
// is gather's index of [outer, k, inner] instead of indexSelect's k indices.
template <bool adds, bool per_element>
napi_value IndexFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t outer = args.integer(1), size = args.integer(2), inner = args.integer(3);
  Array index = args.array_of(4, kInt32);
  const int64_t k = per_element ? args.integer(5) : int64_t(index.length);
  Array out = args.array_of(per_element ? 6 : 5, x.dtype);
  if (!args.ok()) return nullptr;
  const int es = ElementSize(x.dtype);
  const int32_t* ix = index.as<int32_t>();
  const int64_t nindex = per_element ? outer * k * inner : k;
  if (size_t(nindex) > index.length || !IndicesInRange(ix, nindex, size))
    return args.fail("an index is out of range for the indexed dimension"), nullptr;
  bool done = true;
  if (per_element) {
    if (adds) done = ScatterAdd(x.dtype, x.data, outer, size, inner, ix, k, out.data);
    else Gather(x.data, es, outer, size, inner, ix, k, out.data);
  } else {
    if (adds) done = IndexAdd(x.dtype, x.data, outer, size, inner, ix, k, out.data);
    else IndexSelect(x.data, es, outer, size, inner, ix, k, out.data);
  }
  if (!done) return args.fail("cannot accumulate this dtype"), nullptr;
  return nullptr;
}

// triangle(x, batch, rows, cols, diagonal, upper, out)
napi_value TriangleFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array x = args.array(0);
  const int64_t batch = args.integer(1), rows = args.integer(2), cols = args.integer(3), diag = args.integer(4);
  const bool upper = args.boolean(5);
  Array out = args.array_of(6, x.dtype);
  if (!args.ok()) return nullptr;
  Triangle(x.data, ElementSize(x.dtype), batch, rows, cols, diag, upper, out.data);
  return nullptr;
}

// adamStep(param, grad, expAvg, expAvgSq, maxExpAvgSq | null, params) with params = [n, lr, beta1,
// beta2, eps, weightDecay, decoupled, step, maximize].
napi_value AdamFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array p = args.array(0);
  Array g = args.array_of(1, p.dtype), m = args.array_of(2, p.dtype), v = args.array_of(3, p.dtype);
  Array mv = args.array_of(4, p.dtype, true);
  Array pa = args.array_of(5, kFloat64);
  if (!args.ok()) return nullptr;
  if (!IsFloat(p.dtype) || pa.length < 9) return args.fail("adamStep needs float arrays and 9 parameters"), nullptr;
  const double* q = pa.as<double>();
  AdamParams ap;
  ap.lr = q[1], ap.beta1 = q[2], ap.beta2 = q[3], ap.eps = q[4], ap.weight_decay = q[5];
  ap.decoupled = q[6] != 0, ap.maximize = q[8] != 0, ap.amsgrad = mv.data != nullptr;
  const double step = q[7];
  ap.step_size = ap.lr / (1 - std::pow(ap.beta1, step));
  ap.bias2_sqrt = std::sqrt(1 - std::pow(ap.beta2, step));
  const int64_t n = int64_t(q[0]);
  if (p.dtype == kFloat32) Adam<float>(ap, p.as<float>(), g.as<float>(), m.as<float>(), v.as<float>(), mv.as<float>(), n);
  else Adam<double>(ap, p.as<double>(), g.as<double>(), m.as<double>(), v.as<double>(), mv.as<double>(), n);
  return nullptr;
}

// sgdStep(param, grad, momentumBuffer | null, params) with params = [n, lr, momentum, dampening,
// nesterov, weightDecay, maximize, firstStep].
napi_value SgdFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array p = args.array(0);
  Array g = args.array_of(1, p.dtype), buf = args.array_of(2, p.dtype, true);
  Array pa = args.array_of(3, kFloat64);
  if (!args.ok()) return nullptr;
  if (!IsFloat(p.dtype) || pa.length < 8) return args.fail("sgdStep needs float arrays and 8 parameters"), nullptr;
  const double* q = pa.as<double>();
  SgdParams sp;
  sp.lr = q[1], sp.momentum = q[2], sp.dampening = q[3], sp.nesterov = q[4] != 0, sp.weight_decay = q[5];
  sp.maximize = q[6] != 0, sp.first_step = q[7] != 0, sp.has_buffer = buf.data != nullptr;
  const int64_t n = int64_t(q[0]);
  if (p.dtype == kFloat32) Sgd<float>(sp, p.as<float>(), g.as<float>(), buf.as<float>(), n);
  else Sgd<double>(sp, p.as<double>(), g.as<double>(), buf.as<double>(), n);
  return nullptr;
}

}  // namespace

void RegisterNn(napi_env env, napi_value exports) {
  Define(env, exports, "softmax", SoftmaxFn);
  Define(env, exports, "softmaxBackward", SoftmaxBackwardFn);
  Define(env, exports, "layerNorm", LayerNormFn);
  Define(env, exports, "layerNormBackward", LayerNormBackwardFn);
  Define(env, exports, "indexSelect", IndexFn<false, false>);
  Define(env, exports, "indexAdd", IndexFn<true, false>);
  Define(env, exports, "gather", IndexFn<false, true>);
  Define(env, exports, "scatterAdd", IndexFn<true, true>);
  Define(env, exports, "triangle", TriangleFn);
  Define(env, exports, "adamStep", AdamFn);
  Define(env, exports, "sgdStep", SgdFn);
}

}  // namespace rt
