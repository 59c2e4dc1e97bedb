// N-API entry points of the fused attention kernel (attention.cc). Argument orders and the packed
// parameter layout are mirrored by src/backend/cpu/attention.ts, which checks every bound first.
#include <type_traits>

#include "attention.h"
#include "napi_args.h"
#include "napi_register.h"

namespace rt {
namespace {

constexpr size_t kParams = 29;

// params: [n, h, l, s, d, dv, qOff, qsn, qsh, qsr, kOff, ksn, ksh, ksr, vOff, vsn, vsh, vsr,
//          bOff, bsn, bsh, bsi, bsj, causal, scale, dropoutP, seedLo, seedHi, lowp]
template <class T>
AttnProblem<T> Problem(const double* q, const Array& qa, const Array& ka, const Array& va, const Array& ba) {
  AttnProblem<T> p;
  p.n = int64_t(q[0]), p.h = int64_t(q[1]), p.l = int64_t(q[2]), p.s = int64_t(q[3]), p.d = int64_t(q[4]), p.dv = int64_t(q[5]);
  p.q = {qa.as<T>() + int64_t(q[6]), int64_t(q[7]), int64_t(q[8]), int64_t(q[9])};
  p.k = {ka.as<T>() + int64_t(q[10]), int64_t(q[11]), int64_t(q[12]), int64_t(q[13])};
  p.v = {va.as<T>() + int64_t(q[14]), int64_t(q[15]), int64_t(q[16]), int64_t(q[17])};
  p.bias = {ba.data ? ba.as<T>() + int64_t(q[18]) : nullptr, int64_t(q[19]), int64_t(q[20]), int64_t(q[21]), int64_t(q[22])};
  p.causal = q[23] != 0;
  p.scale = q[24];
  p.dropout_p = q[25];
  p.seed = (uint64_t(q[27]) << 32) | uint64_t(q[26]);
  p.lowp = std::is_same_v<T, float> && q[28] != 0;
  return p;
}

// attentionForward(q, k, v, bias | null, out, lse, params)
napi_value AttentionForwardFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array q = args.array(0);
  Array k = args.array_of(1, q.dtype), v = args.array_of(2, q.dtype), b = args.array_of(3, q.dtype, true);
  Array out = args.array_of(4, q.dtype), lse = args.array_of(5, q.dtype);
  Array pa = args.array_of(6, kFloat64);
  if (!args.ok()) return nullptr;
  if ((q.dtype != kFloat32 && q.dtype != kFloat64) || pa.length < kParams) return args.fail("attentionForward needs float arrays and 29 parameters"), nullptr;
  const double* ps = pa.as<double>();
  if (q.dtype == kFloat32) AttentionForward<float>(Problem<float>(ps, q, k, v, b), out.as<float>(), lse.as<float>());
  else AttentionForward<double>(Problem<double>(ps, q, k, v, b), out.as<double>(), lse.as<double>());
  return nullptr;
}

// attentionBackward(q, k, v, bias | null, out, dout, lse, dq, dk, dv, params)
napi_value AttentionBackwardFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array q = args.array(0);
  Array k = args.array_of(1, q.dtype), v = args.array_of(2, q.dtype), b = args.array_of(3, q.dtype, true);
  Array out = args.array_of(4, q.dtype), dout = args.array_of(5, q.dtype), lse = args.array_of(6, q.dtype);
  Array dq = args.array_of(7, q.dtype), dk = args.array_of(8, q.dtype), dv = args.array_of(9, q.dtype);
  Array pa = args.array_of(10, kFloat64);
  if (!args.ok()) return nullptr;
  if ((q.dtype != kFloat32 && q.dtype != kFloat64) || pa.length < kParams) return args.fail("attentionBackward needs float arrays and 29 parameters"), nullptr;
  const double* ps = pa.as<double>();
  if (q.dtype == kFloat32)
    AttentionBackward<float>(Problem<float>(ps, q, k, v, b), out.as<float>(), dout.as<float>(), lse.as<float>(), dq.as<float>(),
                             dk.as<float>(), dv.as<float>());
  else
    AttentionBackward<double>(Problem<double>(ps, q, k, v, b), out.as<double>(), dout.as<double>(), lse.as<double>(),
                              dq.as<double>(), dk.as<double>(), dv.as<double>());
  return nullptr;
}

}  // namespace

void RegisterAttention(napi_env env, napi_value exports) {
  Define(env, exports, "attentionForward", AttentionForwardFn);
  Define(env, exports, "attentionBackward", AttentionBackwardFn);
}

}  // namespace rt
