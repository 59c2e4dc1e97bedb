// arenaCostBench: what one output's buffer costs V8, each way the arena could make it, timed in
// C++ so that no JavaScript call is counted (bench/arena_cost.ts prints it). Process CPU time, so
// the collections the garbage makes (and any helper thread's share of them) are in the figures.
#include <node_api.h>
#include <v8.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "kernels/napi_register.h"

namespace rt {
namespace {

void NoDelete(void*, size_t, void*) {}
void NoFinalize(napi_env, void*, void*) {}
// What a slab's first-pass weak callback must do at least: V8 requires the handle reset there.
void Forget(const v8::WeakCallbackInfo<v8::Global<v8::Float32Array>>& info) {
  info.GetParameter()->Reset();
  delete info.GetParameter();
}

double CpuNs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

constexpr int kCases = 7;

// arenaCostBench(calls, bytes, only = -1) -> Float64Array(kCases) of ns per output (NaN where not
// run): 0 napi_create_external_arraybuffer (a plain ArrayBuffer, its bytes counted as external
// memory), 1 a new backing store and SharedArrayBuffer (the arena before it kept stores), 2 a
// SharedArrayBuffer over one kept store (the arena now), 3 the backing store alone, 4 case 2 plus
// a Float32Array over it, 5 a Float32Array over one slab SharedArrayBuffer with a weak handle whose
// callback would return the slot (sub-allocation from slabs), 6 an empty N-API call's own work.
napi_value ArenaCostBenchFn(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  double calls_d = 0, bytes_d = 0, only_d = -1;
  if (argc >= 2) {
    napi_get_value_double(env, argv[0], &calls_d);
    napi_get_value_double(env, argv[1], &bytes_d);
  }
  if (argc >= 3) napi_get_value_double(env, argv[2], &only_d);
  if (!(calls_d >= 1 && calls_d <= 1e9) || !(bytes_d >= 4 && bytes_d <= 1 << 30)) {
    napi_throw_range_error(env, nullptr, "arenaCostBench(calls, bytes): expected 1 <= calls <= 1e9 and 4 <= bytes <= 1 GiB");
    return nullptr;
  }
  const int calls = int(calls_d), only = int(only_d);
  const size_t bytes = size_t(bytes_d) & ~size_t(3);
  void* mem = nullptr;
  if (posix_memalign(&mem, 64, bytes) != 0) {
    napi_throw_error(env, nullptr, "arenaCostBench: out of memory");
    return nullptr;
  }
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  double out[kCases];
  for (double& o : out) o = 0.0 / 0.0;
  auto run = [&](int k, auto body) {
    if (only >= 0 && only != k) return;
    const double t0 = CpuNs();
    for (int i = 0; i < calls; i += 256) {
      v8::HandleScope scope(isolate);
      for (int j = 0; j < 256; j++) body();
    }
    out[k] = (CpuNs() - t0) / calls;
  };
  run(0, [&] { napi_value ab; napi_create_external_arraybuffer(env, mem, bytes, NoFinalize, nullptr, &ab); });
  run(1, [&] { v8::SharedArrayBuffer::New(isolate, v8::SharedArrayBuffer::NewBackingStore(mem, bytes, NoDelete, nullptr)); });
  std::shared_ptr<v8::BackingStore> kept = v8::SharedArrayBuffer::NewBackingStore(mem, bytes, NoDelete, nullptr);
  run(2, [&] { v8::SharedArrayBuffer::New(isolate, kept); });
  run(3, [&] { std::shared_ptr<v8::BackingStore> s = v8::SharedArrayBuffer::NewBackingStore(mem, bytes, NoDelete, nullptr); });
  run(4, [&] { v8::Float32Array::New(v8::SharedArrayBuffer::New(isolate, kept), 0, bytes / 4); });
  {
    v8::HandleScope scope(isolate);
    v8::Local<v8::SharedArrayBuffer> slab = v8::SharedArrayBuffer::New(isolate, kept);
    run(5, [&] {
      auto* handle = new v8::Global<v8::Float32Array>(isolate, v8::Float32Array::New(slab, 0, bytes / 4));
      handle->SetWeak(handle, Forget, v8::WeakCallbackType::kParameter);
    });
  }
  run(6, [&] { napi_value v; napi_get_null(env, &v); });
  // `mem` is never freed: buffers over it may still wait for a collection (a few MB at most).
  kept.reset();
  napi_value ab, arr;
  void* p = nullptr;
  napi_create_arraybuffer(env, sizeof(out), &p, &ab);
  std::memcpy(p, out, sizeof(out));
  napi_create_typedarray(env, napi_float64_array, kCases, ab, 0, &arr);
  return arr;
}

}  // namespace

void RegisterArenaCost(napi_env env, napi_value exports) { Define(env, exports, "arenaCostBench", ArenaCostBenchFn); }

}  // namespace rt
