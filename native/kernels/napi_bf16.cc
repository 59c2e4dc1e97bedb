// N-API entry points of the bfloat16 GEMM (bf16_gemm.h). Argument order mirrored by
// src/backend/cpu/native.ts.
#include <string>

#include "bf16_gemm.h"
#include "napi_args.h"
#include "napi_register.h"

namespace rt {
namespace {

// matmulBf16(a, b, out, params): a and b Float32Array or Uint16Array (bfloat16 bits), out a
// Float32Array; params as for matmul: [batch, m, n, k, aOffset, aRowStride, aColStride,
// aBatchStride, bOffset, bRowStride, bColStride, bBatchStride, outOffset, alpha, beta].
napi_value MatmulBf16Fn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  Array a = args.array(0), b = args.array(1);
  Array out = args.array_of(2, kFloat32);
  Array pa = args.array_of(3, kFloat64);
  if (!args.ok()) return nullptr;
  const auto ok = [](int d) { return d == kFloat32 || d == kBFloat16; };
  if (!ok(a.dtype) || !ok(b.dtype) || pa.length < 15) return args.fail("matmulBf16 needs float32 or bfloat16 operands and 15 parameters"), nullptr;
  const double* p = pa.as<double>();
  const auto operand = [](const Array& x, const double* q) {
    Bf16Operand o;
    o.bf16 = x.dtype == kBFloat16;
    o.data = static_cast<const char*>(x.data) + int64_t(q[0]) * (o.bf16 ? 2 : 4);
    o.rs = int64_t(q[1]), o.cs = int64_t(q[2]), o.bs = int64_t(q[3]);
    return o;
  };
  Bf16MatmulArgs m;
  m.batch = int64_t(p[0]), m.m = int64_t(p[1]), m.n = int64_t(p[2]), m.k = int64_t(p[3]);
  m.a = operand(a, p + 4);
  m.b = operand(b, p + 8);
  m.out = out.as<float>() + int64_t(p[12]);
  m.alpha = float(p[13]), m.beta = float(p[14]);
  MatmulBf16(m);
  return nullptr;
}

// bf16GemmPath() -> the path that runs; bf16GemmPath(name) selects one ("auto", "amx", "avx512bf16",
// "portable") and returns whether this CPU can run it (no change when not).
napi_value Bf16GemmPathFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  napi_value r;
  if (argc >= 1) {
    char buf[32] = {0};
    size_t len = 0;
    if (napi_get_value_string_utf8(env, argv[0], buf, sizeof buf, &len) != napi_ok) {
      napi_throw_type_error(env, nullptr, "ringtorch native kernel: bf16GemmPath expects a string");
      return nullptr;
    }
    napi_get_boolean(env, SelectBf16GemmPath(std::string(buf, len).c_str()), &r);
    return r;
  }
  napi_create_string_utf8(env, Bf16GemmPath(), NAPI_AUTO_LENGTH, &r);
  return r;
}

}  // namespace

void RegisterBf16(napi_env env, napi_value exports) {
  Define(env, exports, "matmulBf16", MatmulBf16Fn);
  Define(env, exports, "bf16GemmPath", Bf16GemmPathFn);
}

}  // namespace rt
