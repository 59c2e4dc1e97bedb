#pragma once
#include <node_api.h>

namespace rt {

inline void Define(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, nullptr, &fn);
  napi_set_named_property(env, exports, name, fn);
}

void RegisterMath(napi_env env, napi_value exports);
void RegisterNn(napi_env env, napi_value exports);
void RegisterRuntime(napi_env env, napi_value exports);
void RegisterExtra(napi_env env, napi_value exports);
void RegisterBf16(napi_env env, napi_value exports);
void RegisterConv(napi_env env, napi_value exports);
void RegisterAttention(napi_env env, napi_value exports);
void RegisterLoss(napi_env env, napi_value exports);

}  // namespace rt
