#include <napi.h>

static Napi::Value ProbeSum(const Napi::CallbackInfo& info) {
  auto a = info[0].As<Napi::Float32Array>();
  double s = 0; for (size_t i = 0; i < a.ElementLength(); i++) s += a.Data()[i];
  a.Data()[0] = 42;
  return Napi::Number::New(info.Env(), s);
}

void RegisterKernels(Napi::Env env, Napi::Object exports) {
  exports.Set("probeSum", Napi::Function::New(env, ProbeSum));
}
