// The optional `mpi` backend's native half: a thin N-API layer over the system MPI library
// (Debian's libopenmpi-dev), built apart from the main addon and only where mpicxx exists
// (scripts/build-mpi.js). TypeScript (src/distributed/mpi/) decides everything; this hands its
// operations to the communication thread (mpi_thread.cc), which calls MPI.
#include <napi.h>

#include <atomic>
#include <string>

#include "mpi_thread.h"

namespace {

Napi::ThreadSafeFunction g_tsfn;
std::atomic<bool> g_notifyQueued{false};
int g_nextId = 1;
bool g_started = false;

Napi::Value Fail(Napi::Env env, const std::string& message) {
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

// (typed array or null, byte offset, bytes) -> the address there; ok says whether the bytes fit.
// Read through napi_get_typedarray_info, which (unlike Napi::ArrayBuffer) also serves SharedArrayBuffers.
uint8_t* At(const Napi::Value& v, double offset, double bytes, bool& ok) {
  ok = true;
  if (v.IsNull() || v.IsUndefined()) return nullptr;
  napi_typedarray_type type;
  size_t length, byte_offset;
  void* data = nullptr;
  napi_value buffer;
  ok = napi_get_typedarray_info(v.Env(), v, &type, &length, &data, &buffer, &byte_offset) == napi_ok;
  if (!ok) return nullptr;
  ok = offset >= 0 && bytes >= 0 && offset + bytes <= double(v.As<Napi::TypedArray>().ByteLength());
  return static_cast<uint8_t*>(data) + size_t(offset);
}

// (notify) -> { rank, size, library, pids, hosts, tagUpperBound }: starts MPI on its own thread.
// `notify` runs on the main thread after operations finish, while the loop is referenced (ref()).
Napi::Value Init(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_started) return Fail(env, "MPI was already started in this process");
  g_started = true;
  g_tsfn = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "ringtorch-mpi", 0, 1);
  g_tsfn.Unref(env);
  rtmpi::InitInfo r = rtmpi::Start([] {
    if (g_notifyQueued.exchange(true)) return;
    g_tsfn.NonBlockingCall([](Napi::Env env, Napi::Function fn) {
      g_notifyQueued = false;
      // Not through fn.Call: while Node tears the environment down a call fails, and with C++
      // exceptions off node-addon-api would abort the process for it.
      if (env == nullptr || fn.IsEmpty()) return;
      napi_value result;
      napi_call_function(env, env.Undefined(), fn, 0, nullptr, &result);
    });
  });
  if (!r.error.empty()) return Fail(env, r.error);
  Napi::Object out = Napi::Object::New(env);
  out.Set("rank", r.rank);
  out.Set("size", r.size);
  out.Set("library", r.library);
  out.Set("tagUpperBound", r.tagUpperBound);
  Napi::Array pids = Napi::Array::New(env, r.pids.size());
  Napi::Array hosts = Napi::Array::New(env, r.hosts.size());
  for (size_t i = 0; i < r.pids.size(); i++) {
    pids.Set(uint32_t(i), r.pids[i]);
    hosts.Set(uint32_t(i), r.hosts[i]);
  }
  out.Set("pids", pids);
  out.Set("hosts", hosts);
  return out;
}

double Num(const Napi::CallbackInfo& info, size_t i) { return info[i].As<Napi::Number>().DoubleValue(); }

// (kind, comm, a, aByteOffset, aBytes, b, bByteOffset, bBytes, count, dtype, op, root, peer, tag, ints) -> id.
Napi::Value Post(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 15) return Fail(env, "post takes 15 arguments");
  rtmpi::Op op;
  op.kind = int(Num(info, 0));
  op.comm = int(Num(info, 1));
  bool okA, okB;
  op.a = At(info[2], Num(info, 3), Num(info, 4), okA);
  op.b = At(info[5], Num(info, 6), Num(info, 7), okB);
  if (!okA || !okB) return Fail(env, "internal: an MPI operation's buffer range lies outside its array");
  op.count = int(Num(info, 8));
  op.dtype = int(Num(info, 9));
  op.op = int(Num(info, 10));
  op.root = int(Num(info, 11));
  op.peer = int(Num(info, 12));
  op.tag = int(Num(info, 13));
  if (info[14].IsTypedArray()) {
    Napi::Int32Array v = info[14].As<Napi::Int32Array>();
    op.v.assign(v.Data(), v.Data() + v.ElementLength());
  }
  op.id = g_nextId++;
  int id = op.id;
  rtmpi::Post(std::move(op));
  return Napi::Number::New(env, id);
}

// (id, ms) -> whether operation `id` finished within ms (0: just look); throws MPI's error.
Napi::Value Wait(const Napi::CallbackInfo& info) {
  std::string error;
  bool done = rtmpi::Wait(int(Num(info, 0)), Num(info, 1), error);
  if (done && !error.empty()) return Fail(info.Env(), error);
  return Napi::Boolean::New(info.Env(), done);
}

// Whether the main thread's event loop stays alive for `notify` (while operations are in flight).
Napi::Value Ref(const Napi::CallbackInfo& info) {
  if (info[0].As<Napi::Boolean>().Value()) g_tsfn.Ref(info.Env());
  else g_tsfn.Unref(info.Env());
  return info.Env().Undefined();
}

Napi::Object Register(Napi::Env env, Napi::Object exports) {
  exports.Set("mpiVersion", Napi::Number::New(env, 3));
  exports.Set("init", Napi::Function::New(env, Init));
  exports.Set("post", Napi::Function::New(env, Post));
  exports.Set("wait", Napi::Function::New(env, Wait));
  exports.Set("ref", Napi::Function::New(env, Ref));
  return exports;
}

}  // namespace

NODE_API_MODULE(ringtorch_mpi, Register)
