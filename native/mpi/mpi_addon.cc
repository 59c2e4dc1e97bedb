// The optional `mpi` backend's native half: a thin N-API layer over the system MPI library
// (Debian's libopenmpi-dev), built apart from the main addon and only where mpicxx exists
// (scripts/build-mpi.js). TypeScript (src/distributed/mpi/) decides everything; this calls MPI.
// Collectives run on the main thread (MPI_THREAD_FUNNELED); nonblocking ones progress whenever
// the process group tests them.
#include <dlfcn.h>
#include <mpi.h>
#include <napi.h>

#include <string>
#include <vector>

namespace {

std::vector<MPI_Request> g_requests;
std::vector<int> g_free;

Napi::Value Fail(Napi::Env env, const std::string& message) {
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, size_t(len));
}

MPI_Datatype TypeOf(int dtype) {
  switch (dtype) {
    case 0: return MPI_FLOAT;
    case 1: return MPI_DOUBLE;
    case 2: return MPI_INT;
    default: return MPI_UNSIGNED_CHAR;
  }
}

MPI_Op OpOf(int op) {
  switch (op) {
    case 1: return MPI_PROD;
    case 2: return MPI_MIN;
    case 3: return MPI_MAX;
    default: return MPI_SUM;
  }
}

// (typed array, byte offset) -> the address there; ok says whether `bytes` fit. Read through
// napi_get_typedarray_info, which (unlike Napi::ArrayBuffer) also serves SharedArrayBuffers.
void* At(const Napi::Value& v, size_t offset, size_t bytes, bool& ok) {
  napi_typedarray_type type;
  size_t length, byte_offset;
  void* data = nullptr;
  napi_value buffer;
  ok = napi_get_typedarray_info(v.Env(), v, &type, &length, &data, &buffer, &byte_offset) == napi_ok;
  if (!ok) return nullptr;
  ok = offset + bytes <= v.As<Napi::TypedArray>().ByteLength();
  return static_cast<uint8_t*>(data) + offset;
}

size_t SizeOf(int dtype) { return dtype == 1 ? 8 : dtype == 0 || dtype == 2 ? 4 : 1; }

Napi::Value Init(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    // Open MPI loads its transports as plugins that need libmpi's symbols in the global scope;
    // Node loads this addon (and with it libmpi) with RTLD_LOCAL, so load libmpi again globally.
    dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return Fail(env, "MPI_Init_thread failed: " + ErrorText(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int vlen = 0;
  MPI_Get_library_version(version, &vlen);
  Napi::Object out = Napi::Object::New(env);
  out.Set("rank", rank);
  out.Set("size", size);
  out.Set("library", std::string(version, size_t(vlen)));
  return out;
}

Napi::Value Keep(Napi::Env env, int rc, MPI_Request req, const char* what) {
  if (rc != MPI_SUCCESS) return Fail(env, std::string(what) + " failed: " + ErrorText(rc));
  int id;
  if (!g_free.empty()) {
    id = g_free.back();
    g_free.pop_back();
    g_requests[size_t(id)] = req;
  } else {
    id = int(g_requests.size());
    g_requests.push_back(req);
  }
  return Napi::Number::New(env, id);
}

// (buf, byteOffset, count, dtype, op) -> request id: in-place MPI_Iallreduce.
Napi::Value IallReduce(const Napi::CallbackInfo& info) {
  int count = info[2].As<Napi::Number>().Int32Value(), dtype = info[3].As<Napi::Number>().Int32Value();
  bool ok;
  void* p = At(info[0], info[1].As<Napi::Number>().Uint32Value(), size_t(count) * SizeOf(dtype), ok);
  if (!ok) return Fail(info.Env(), "iallReduce outside its buffer");
  MPI_Request req;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, p, count, TypeOf(dtype), OpOf(info[4].As<Napi::Number>().Int32Value()), MPI_COMM_WORLD, &req);
  return Keep(info.Env(), rc, req, "MPI_Iallreduce");
}

// (buf, byteOffset, count, dtype, root) -> request id.
Napi::Value Ibcast(const Napi::CallbackInfo& info) {
  int count = info[2].As<Napi::Number>().Int32Value(), dtype = info[3].As<Napi::Number>().Int32Value();
  bool ok;
  void* p = At(info[0], info[1].As<Napi::Number>().Uint32Value(), size_t(count) * SizeOf(dtype), ok);
  if (!ok) return Fail(info.Env(), "ibroadcast outside its buffer");
  MPI_Request req;
  int rc = MPI_Ibcast(p, count, TypeOf(dtype), info[4].As<Napi::Number>().Int32Value(), MPI_COMM_WORLD, &req);
  return Keep(info.Env(), rc, req, "MPI_Ibcast");
}

// (in, inByteOffset, out, outByteOffset, count, dtype) -> request id: out holds size × count.
Napi::Value IallGather(const Napi::CallbackInfo& info) {
  int count = info[4].As<Napi::Number>().Int32Value(), dtype = info[5].As<Napi::Number>().Int32Value();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool ok1, ok2;
  void* in = At(info[0], info[1].As<Napi::Number>().Uint32Value(), size_t(count) * SizeOf(dtype), ok1);
  void* out = At(info[2], info[3].As<Napi::Number>().Uint32Value(), size_t(count) * SizeOf(dtype) * size_t(size), ok2);
  if (!ok1 || !ok2) return Fail(info.Env(), "iallGather outside its buffers");
  MPI_Request req;
  int rc = MPI_Iallgather(in, count, TypeOf(dtype), out, count, TypeOf(dtype), MPI_COMM_WORLD, &req);
  return Keep(info.Env(), rc, req, "MPI_Iallgather");
}

Napi::Value Ibarrier(const Napi::CallbackInfo& info) {
  MPI_Request req;
  int rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
  return Keep(info.Env(), rc, req, "MPI_Ibarrier");
}

// (id) -> whether the request finished (it is then released); throws its error.
Napi::Value Test(const Napi::CallbackInfo& info) {
  int id = info[0].As<Napi::Number>().Int32Value();
  if (id < 0 || size_t(id) >= g_requests.size()) return Fail(info.Env(), "no such MPI request");
  int done = 0;
  int rc = MPI_Test(&g_requests[size_t(id)], &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return Fail(info.Env(), "MPI_Test failed: " + ErrorText(rc));
  if (done) g_free.push_back(id);
  return Napi::Boolean::New(info.Env(), done != 0);
}

Napi::Value Finalize(const Napi::CallbackInfo& info) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
  return info.Env().Undefined();
}

Napi::Object Register(Napi::Env env, Napi::Object exports) {
  exports.Set("mpiVersion", Napi::Number::New(env, 1));
  exports.Set("init", Napi::Function::New(env, Init));
  exports.Set("iallReduce", Napi::Function::New(env, IallReduce));
  exports.Set("ibroadcast", Napi::Function::New(env, Ibcast));
  exports.Set("iallGather", Napi::Function::New(env, IallGather));
  exports.Set("ibarrier", Napi::Function::New(env, Ibarrier));
  exports.Set("test", Napi::Function::New(env, Test));
  exports.Set("finalize", Napi::Function::New(env, Finalize));
  return exports;
}

}  // namespace

NODE_API_MODULE(ringtorch_mpi, Register)
