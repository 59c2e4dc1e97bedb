#include <napi.h>

#include "napi_register.h"

void RegisterKernels(Napi::Env env, Napi::Object exports) {
  rt::RegisterRuntime(env, exports);
  rt::RegisterMath(env, exports);
  rt::RegisterNn(env, exports);
  rt::RegisterExtra(env, exports);
  rt::RegisterBf16(env, exports);
  rt::RegisterConv(env, exports);
  rt::RegisterAttention(env, exports);
  rt::RegisterLoss(env, exports);
}
