#include <napi.h>

void RegisterComm(Napi::Env env, Napi::Object exports) {
  exports.Set("commVersion", Napi::Number::New(env, 1));
}
