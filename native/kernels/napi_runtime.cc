// N-API entry points for the thread pool and the instruction-set choice. The defaults are decided in
// TypeScript (src/backend/cpu/threads.ts, src/backend/cpu/isa.ts).
#include <string>

#include "dispatch.h"
#include "napi_args.h"
#include "napi_register.h"
#include "thread_pool.h"

namespace rt {
namespace {

napi_value SetNumThreadsFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int64_t n = args.integer(0);
  if (!args.ok()) return nullptr;
  SetNumThreads(int(n));
  return nullptr;
}

napi_value GetNumThreadsFn(napi_env env, napi_callback_info) {
  napi_value r;
  napi_create_int32(env, GetNumThreads(), &r);
  return r;
}

std::string StringArg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  char buf[32] = {0};
  size_t len = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], buf, sizeof buf, &len) != napi_ok) return "";
  return std::string(buf, len);
}

napi_value Bool(napi_env env, bool v) {
  napi_value r;
  napi_get_boolean(env, v, &r);
  return r;
}

// setIsa(name) -> whether the named kernels ("portable", "avx2", "avx512", "auto") now run.
napi_value SetIsaFn(napi_env env, napi_callback_info info) { return Bool(env, SelectIsa(StringArg(env, info).c_str())); }

napi_value IsaSupportedFn(napi_env env, napi_callback_info info) {
  return Bool(env, IsaSupported(StringArg(env, info).c_str()));
}

napi_value GetIsaFn(napi_env env, napi_callback_info) {
  napi_value r;
  napi_create_string_utf8(env, ActiveIsa(), NAPI_AUTO_LENGTH, &r);
  return r;
}

// adjustExternalMemory(bytes): tells V8 of tensor memory it does not see (SharedArrayBuffer backing
// stores are not counted as external memory), so that its collector runs as that memory grows.
napi_value AdjustExternalMemoryFn(napi_env env, napi_callback_info info) {
  Args args(env, info);
  const int64_t bytes = args.integer(0);
  if (!args.ok()) return nullptr;
  int64_t total;
  napi_adjust_external_memory(env, bytes, &total);
  return nullptr;
}

}  // namespace

void RegisterRuntime(napi_env env, napi_value exports) {
  Define(env, exports, "setNumThreads", SetNumThreadsFn);
  Define(env, exports, "getNumThreads", GetNumThreadsFn);
  Define(env, exports, "setIsa", SetIsaFn);
  Define(env, exports, "getIsa", GetIsaFn);
  Define(env, exports, "isaSupported", IsaSupportedFn);
  Define(env, exports, "adjustExternalMemory", AdjustExternalMemoryFn);
}

}  // namespace rt
