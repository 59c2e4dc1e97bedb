// The addon's single entry point. Each area registers its own functions so that
// kernels and the communication hot loops can grow in separate files.
#include <napi.h>

void RegisterKernels(Napi::Env env, Napi::Object exports);
void RegisterComm(Napi::Env env, Napi::Object exports);
namespace rt {
void RegisterArena(napi_env env, napi_value exports);
void RegisterMapped(napi_env env, napi_value exports);
}

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  RegisterKernels(env, exports);
  RegisterComm(env, exports);
  rt::RegisterArena(env, exports);
  rt::RegisterMapped(env, exports);
  return exports;
}

NODE_API_MODULE(ringtorch, Init)
