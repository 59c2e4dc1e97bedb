// N-API entry points of the communication layer. Arguments are checked in TypeScript
// (src/distributed/native.ts) before they get here; what is re-checked here is only what would
// otherwise let a bad call write outside a buffer.
#include <napi.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/comm.h"

using namespace rtcomm;

namespace {

std::mutex g_mu;
std::vector<std::shared_ptr<Comm>> g_comms;

std::shared_ptr<Comm> GetComm(const Napi::CallbackInfo& info, int index = 0) {
  int h = info[index].As<Napi::Number>().Int32Value();
  std::lock_guard<std::mutex> lock(g_mu);
  if (h < 0 || size_t(h) >= g_comms.size()) return nullptr;
  return g_comms[h];
}

Napi::Value Fail(Napi::Env env, const std::string& message) {
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

// The bytes of a typed array (SharedArrayBuffer-backed or not).
bool Bytes(napi_env env, napi_value v, uint8_t** data, size_t* byte_length) {
  napi_typedarray_type type;
  size_t length;
  void* ptr;
  napi_value ab;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, &length, &ptr, &ab, &offset) != napi_ok) return false;
  size_t es = 1;
  switch (type) {
    case napi_int16_array:
    case napi_uint16_array:
      es = 2;
      break;
    case napi_int32_array:
    case napi_uint32_array:
    case napi_float32_array:
      es = 4;
      break;
    case napi_float64_array:
    case napi_bigint64_array:
    case napi_biguint64_array:
      es = 8;
      break;
    default:
      es = 1;
  }
  *data = static_cast<uint8_t*>(ptr);
  *byte_length = length * es;
  return true;
}

double Num(const Napi::CallbackInfo& info, int i) { return info[i].As<Napi::Number>().DoubleValue(); }

Napi::Value CommCreate(const Napi::CallbackInfo& info) {
  auto c = std::make_shared<Comm>();
  c->rank = int(Num(info, 0));
  c->world = int(Num(info, 1));
  c->slot_bytes = uint32_t(Num(info, 2));
  c->slots = uint32_t(Num(info, 3));
  c->spin_us = int64_t(Num(info, 4));
  c->streaming_bytes = size_t(Num(info, 5));
  if (info.Length() > 6) c->stripe_bytes = size_t(Num(info, 6));
  c->peers.resize(size_t(c->world));
  std::lock_guard<std::mutex> lock(g_mu);
  g_comms.push_back(c);
  return Napi::Number::New(info.Env(), double(g_comms.size() - 1));
}

Napi::Value CommCreateSegment(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (!c) return Fail(info.Env(), "no such communicator");
  std::string name = info[1].As<Napi::String>().Utf8Value();
  std::string err;
  size_t bytes = SegmentBytes(uint32_t(c->world), c->slot_bytes, c->slots);
  void* seg = CreateSegment(name, bytes, err);
  if (!seg) return Fail(info.Env(), err);
  auto* h = static_cast<SegmentHeader*>(seg);
  h->magic = kSegmentMagic;
  h->world = uint32_t(c->world);
  h->owner = uint32_t(c->rank);
  h->slot_bytes = c->slot_bytes;
  h->slots = c->slots;
  h->owner_pid = int32_t(getpid());
  c->segment = seg;
  c->segment_bytes = bytes;
  c->bell = &h->bell;
  c->mappings.push_back({seg, bytes});
  return info.Env().Undefined();
}

Napi::Value CommAttachShmPeer(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (!c || !c->segment) return Fail(info.Env(), "communicator has no segment of its own yet");
  int peer = int(Num(info, 1));
  std::string name = info[2].As<Napi::String>().Utf8Value();
  int pid = int(Num(info, 3));
  if (peer < 0 || peer >= c->world || peer == c->rank) return Fail(info.Env(), "bad peer rank");
  std::string err;
  size_t bytes = SegmentBytes(uint32_t(c->world), c->slot_bytes, c->slots);
  void* seg = OpenSegment(name, bytes, err);
  if (!seg) return Fail(info.Env(), err);
  c->mappings.push_back({seg, bytes});
  auto* h = static_cast<SegmentHeader*>(seg);
  if (h->magic != kSegmentMagic || h->owner != uint32_t(peer) || h->world != uint32_t(c->world) ||
      h->slot_bytes != c->slot_bytes || h->slots != c->slots || h->owner_pid != pid) {
    return Fail(info.Env(), "shared-memory segment " + name + " does not belong to rank " + std::to_string(peer) +
                                " of this job");
  }
  Peer& p = c->peers[size_t(peer)];
  p.kind = 1;
  p.out = ChannelAt(seg, uint32_t(c->rank), c->slot_bytes, c->slots);
  p.out_slots = SlotsAt(seg, uint32_t(c->rank), c->slot_bytes, c->slots);
  p.in = ChannelAt(c->segment, uint32_t(peer), c->slot_bytes, c->slots);
  p.in_slots = SlotsAt(c->segment, uint32_t(peer), c->slot_bytes, c->slots);
  p.bell = &h->bell;
  p.header = h;
  p.pid = pid;
  p.pidfd = OpenPidfd(pid);
  return info.Env().Undefined();
}

Napi::Value CommAttachTcpPeer(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (!c) return Fail(info.Env(), "no such communicator");
  int peer = int(Num(info, 1));
  if (peer < 0 || peer >= c->world || peer == c->rank) return Fail(info.Env(), "bad peer rank");
  int stream = info.Length() > 3 ? int(Num(info, 3)) : 0;
  if (stream < 0 || stream >= kMaxStreams) return Fail(info.Env(), "bad stream index");
  Peer& p = c->peers[size_t(peer)];
  p.kind = 2;
  if (p.streams.size() <= size_t(stream)) p.streams.resize(size_t(stream) + 1);
  p.streams[size_t(stream)].fd = int(Num(info, 2));
  return info.Env().Undefined();
}

// (handle, desc, count, bufs, timeoutMs, stallMs, segments, wakeSeen): with wakeSeen (a value of
// posted(handle)) the run also returns kStalled once the main thread has posted since (notifyPosted).
// The rest: `desc` holds kFields numbers per
// transfer (see src/distributed/engine/link.ts); a scattered message's pieces are triples
// (buffer index, byte offset, bytes) in the Float64Array `segments`.
Napi::Value CommRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto c = GetComm(info);
  if (!c) return Fail(env, "no such communicator");
  uint8_t* desc_bytes;
  size_t desc_len;
  if (!Bytes(env, info[1], &desc_bytes, &desc_len)) return Fail(env, "descriptor must be a Float64Array");
  double* desc = reinterpret_cast<double*>(desc_bytes);
  size_t count = size_t(Num(info, 2));
  if (count * kFields * 8 > desc_len) return Fail(env, "descriptor too short");
  Napi::Array bufs = info[3].As<Napi::Array>();
  std::vector<uint8_t*> ptrs(bufs.Length());
  std::vector<size_t> lens(bufs.Length());
  for (uint32_t i = 0; i < bufs.Length(); i++) {
    if (!Bytes(env, bufs.Get(i), &ptrs[i], &lens[i])) return Fail(env, "buffers must be typed arrays");
  }
  double* seg_desc = nullptr;
  size_t seg_count = 0;
  if (info.Length() > 6 && !info[6].IsUndefined()) {
    uint8_t* seg_bytes;
    size_t seg_len;
    if (!Bytes(env, info[6], &seg_bytes, &seg_len)) return Fail(env, "segments must be a Float64Array");
    seg_desc = reinterpret_cast<double*>(seg_bytes);
    seg_count = seg_len / (3 * 8);
  }
  std::vector<Transfer> ops(count);
  std::vector<std::vector<Segment>> segments(count);
  for (size_t i = 0; i < count; i++) {
    double* d = desc + i * kFields;
    Transfer& t = ops[i];
    t.peer = int(d[0]);
    t.kind = int(d[1]);
    size_t bi = size_t(d[2]), off = size_t(d[3]);
    t.bytes = size_t(d[4]);
    long li = long(d[5]);
    size_t loff = size_t(d[6]);
    t.dtype = int(d[7]);
    t.op = int(d[8]);
    t.tag = uint32_t(d[9]);
    t.code = uint32_t(d[10]);
    t.progress = &d[11];
    t.gate = int(d[12]);
    t.divisor = d[13] > 0 ? d[13] : 1;
    size_t nsegs = size_t(d[14]);
    t.segs = nullptr;
    t.nsegs = 0;
    if (t.peer < 0 || t.peer >= c->world || t.peer == c->rank) return Fail(env, "transfer to a bad peer rank");
    t.stream = 0;
    t.stage_fill = &c->peers[size_t(t.peer)].streams[0].stage_fill;
    if (t.gate >= 0 && (size_t(t.gate) >= count || t.kind != 0 || int(desc[size_t(t.gate) * kFields + 1]) == 0)) {
      return Fail(env, "a send can only be gated on a receive of the same batch");
    }
    if (nsegs > 0) {
      // The pieces of a scattered message, empty ones dropped; each holds whole elements so that
      // a reduction never splits one across buffers.
      if (bi + nsegs > seg_count) return Fail(env, "segment list outside its descriptor");
      if (li >= 0) return Fail(env, "a scattered message reduces in place");
      size_t es = t.kind == 2 ? DTypeSize(t.dtype) : 1;
      auto& list = segments[i];
      size_t start = 0;
      for (size_t k = 0; k < nsegs; k++) {
        double* sd = seg_desc + (bi + k) * 3;
        size_t so = size_t(sd[1]), sn = size_t(sd[2]);
        uint8_t* at;
        if (sd[0] < 0) {
          // An address from addressOf(): memory the main thread keeps alive until this operation
          // is reported done (src/distributed/comm_client.ts), so this thread holds no handle to it.
          at = reinterpret_cast<uint8_t*>(uintptr_t(so));
        } else {
          size_t sb = size_t(sd[0]);
          if (sb >= ptrs.size() || so + sn > lens[sb]) return Fail(env, "segment outside its buffer");
          at = ptrs[sb] + so;
        }
        if (sn % es != 0) return Fail(env, "segment of a partial element");
        if (sn > 0) list.push_back({at, sn, start});
        start += sn;
      }
      if (start != t.bytes) return Fail(env, "segments do not add up to the message");
      t.segs = list.data();
      t.nsegs = list.size();
      t.buf = t.segs ? t.segs[0].ptr : nullptr;
      t.local = t.buf;
      continue;
    }
    if (bi >= ptrs.size() || off + t.bytes > lens[bi]) return Fail(env, "transfer outside its buffer");
    t.buf = ptrs[bi] + off;
    t.local = t.buf;
    if (t.kind == 2 && li >= 0) {
      if (size_t(li) >= ptrs.size() || loff + t.bytes > lens[size_t(li)]) return Fail(env, "reduce operand outside its buffer");
      t.local = ptrs[size_t(li)] + loff;
    }
  }
  int64_t timeout_ms = int64_t(Num(info, 4));
  int64_t stall_ms = int64_t(Num(info, 5));
  int64_t wake_seen = info.Length() > 7 && info[7].IsNumber() ? int64_t(Num(info, 7)) : -1;
  c->last_error.clear();
  std::deque<std::vector<Segment>> parts;
  std::vector<Transfer> flows;
  std::vector<size_t> first;
  std::string bad = Stripe(*c, ops, desc, parts, flows, first);
  if (!bad.empty()) return Fail(env, bad);
  int status = RunStriped(*c, ops, flows, first, desc, timeout_ms, stall_ms, wake_seen);
  return Napi::Number::New(env, status);
}

// The address of a typed array's first element, for handing its memory to the comm worker
// without a handle (see CommRun's segments).
Napi::Value AddressOf(const Napi::CallbackInfo& info) {
  uint8_t* data;
  size_t len;
  if (!Bytes(info.Env(), info[0], &data, &len)) return Fail(info.Env(), "expected a typed array");
  return Napi::Number::New(info.Env(), double(reinterpret_cast<uintptr_t>(data)));
}

Napi::Value CommLastError(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  return Napi::String::New(info.Env(), c ? c->last_error : "no such communicator");
}

// From the main thread after it posts an operation to the comm worker: counts it and rings this
// rank's doorbell, so that a batch run with wakeSeen returns to take it, also from a futex sleep.
Napi::Value CommNotifyPosted(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (c) {
    c->posted.fetch_add(1, std::memory_order_seq_cst);
    if (c->bell) Ring(c->bell);
  }
  return info.Env().Undefined();
}

// The calling thread's CPU time in ns. /proc/thread-self/schedstat is brought up to date only at
// a scheduler tick or switch (4 ms at HZ=250), too coarse for a pipeline action of a few ms;
// CLOCK_THREAD_CPUTIME_ID counts the running slice too.
Napi::Value ThreadCpuNs(const Napi::CallbackInfo& info) {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return Napi::Number::New(info.Env(), -1);
  return Napi::Number::New(info.Env(), double(ts.tv_sec) * 1e9 + double(ts.tv_nsec));
}

Napi::Value CommPosted(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  return Napi::Number::New(info.Env(), c ? double(c->posted.load(std::memory_order_seq_cst)) : 0);
}

// May be called from the main thread while the comm worker is blocked in CommRun.
Napi::Value CommAbort(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (c) {
    c->aborted.store(true);
    if (c->bell) Ring(c->bell);
  }
  return info.Env().Undefined();
}

// Tells same-host peers that this rank has given up on the group, and wakes them to notice.
Napi::Value CommMarkFailed(const Napi::CallbackInfo& info) {
  auto c = GetComm(info);
  if (c && c->segment) {
    static_cast<SegmentHeader*>(c->segment)->failed.store(1, std::memory_order_release);
    for (auto& p : c->peers) {
      if (p.kind == 1 && p.bell) Ring(p.bell);
    }
  }
  return info.Env().Undefined();
}

Napi::Value CommDestroy(const Napi::CallbackInfo& info) {
  int h = info[0].As<Napi::Number>().Int32Value();
  std::shared_ptr<Comm> c;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (h < 0 || size_t(h) >= g_comms.size()) return info.Env().Undefined();
    c = g_comms[h];
    g_comms[h] = nullptr;
  }
  if (!c) return info.Env().Undefined();
  for (auto& p : c->peers) {
    for (auto& s : p.streams) {
      if (s.fd >= 0) close(s.fd);
      s.fd = -1;
    }
    if (p.pidfd >= 0) close(p.pidfd);
    p.pidfd = -1;
  }
  for (auto& m : c->mappings) munmap(m.addr, m.bytes);
  c->mappings.clear();
  c->segment = nullptr;
  c->bell = nullptr;
  return info.Env().Undefined();
}

Napi::Value ShmUnlink(const Napi::CallbackInfo& info) {
  std::string name = info[0].As<Napi::String>().Utf8Value();
  return Napi::Boolean::New(info.Env(), shm_unlink(name.c_str()) == 0);
}

Napi::Value TcpListen(const Napi::CallbackInfo& info) {
  std::string host = info[0].As<Napi::String>().Utf8Value();
  int port = int(Num(info, 1));
  std::string err;
  int fd = Listen(host, &port, err);
  if (fd < 0) return Fail(info.Env(), err);
  Napi::Array out = Napi::Array::New(info.Env(), 2);
  out.Set(0u, Napi::Number::New(info.Env(), fd));
  out.Set(1u, Napi::Number::New(info.Env(), port));
  return out;
}

// Returns the fd, -1 on timeout, or an error string.
Napi::Value TcpAccept(const Napi::CallbackInfo& info) {
  std::string err;
  int fd = Accept(int(Num(info, 0)), int(Num(info, 1)), int(Num(info, 2)), err);
  if (fd == -2) return Napi::String::New(info.Env(), err);
  return Napi::Number::New(info.Env(), fd);
}

// Returns the fd or an error string.
Napi::Value TcpConnect(const Napi::CallbackInfo& info) {
  std::string err;
  int fd = Connect(info[0].As<Napi::String>().Utf8Value(), int(Num(info, 1)), int(Num(info, 2)), int(Num(info, 3)), err);
  if (fd < 0) return Napi::String::New(info.Env(), err);
  return Napi::Number::New(info.Env(), fd);
}

// (fd, Uint8Array, writing, timeoutMs) -> "" or an error string.
Napi::Value SockTransfer(const Napi::CallbackInfo& info) {
  uint8_t* data;
  size_t len;
  if (!Bytes(info.Env(), info[1], &data, &len)) return Fail(info.Env(), "expected a typed array");
  std::string err;
  int st = TransferExact(int(Num(info, 0)), data, len, info[2].As<Napi::Boolean>().Value(), int(Num(info, 3)), err);
  return Napi::String::New(info.Env(), st == kOk ? "" : err);
}

// (fds: Int32Array, ready: Uint8Array, timeoutMs) -> how many are ready, or an error string.
Napi::Value SockPoll(const Napi::CallbackInfo& info) {
  uint8_t *fds, *ready;
  size_t fl, rl;
  if (!Bytes(info.Env(), info[0], &fds, &fl) || !Bytes(info.Env(), info[1], &ready, &rl)) return Fail(info.Env(), "expected typed arrays");
  size_t n = fl / 4;
  if (rl < n) return Fail(info.Env(), "sockPoll: the ready array is shorter than the fd list");
  std::string err;
  int rc = PollReadable(reinterpret_cast<const int32_t*>(fds), n, int(Num(info, 2)), ready, err);
  if (rc < 0) return Napi::String::New(info.Env(), err);
  return Napi::Number::New(info.Env(), rc);
}

// (fd, Uint8Array, byteOffset) -> bytes read into data[byteOffset..], 0 if none yet, -1 if closed.
Napi::Value SockReadSome(const Napi::CallbackInfo& info) {
  uint8_t* data;
  size_t len;
  if (!Bytes(info.Env(), info[1], &data, &len)) return Fail(info.Env(), "expected a typed array");
  size_t off = size_t(Num(info, 2));
  if (off > len) return Fail(info.Env(), "sockReadSome: offset past the end of the buffer");
  return Napi::Number::New(info.Env(), double(ReadAvailable(int(Num(info, 0)), data + off, len - off)));
}

Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  int fd = int(Num(info, 0));
  if (fd >= 0) close(fd);
  return info.Env().Undefined();
}

// (dtype, op, dst, dstByteOffset, a, aByteOffset, b, bByteOffset, count)
Napi::Value ReduceInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dtype = int(Num(info, 0)), op = int(Num(info, 1));
  uint8_t *d, *a, *b;
  size_t dl, al, bl;
  if (!Bytes(env, info[2], &d, &dl) || !Bytes(env, info[4], &a, &al) || !Bytes(env, info[6], &b, &bl)) {
    return Fail(env, "reduceInto expects typed arrays");
  }
  size_t doff = size_t(Num(info, 3)), aoff = size_t(Num(info, 5)), boff = size_t(Num(info, 7));
  size_t n = size_t(Num(info, 8)), bytes = n * DTypeSize(dtype);
  if (doff + bytes > dl || aoff + bytes > al || boff + bytes > bl) return Fail(env, "reduceInto outside a buffer");
  Reduce(dtype, op, d + doff, a + aoff, b + boff, n);
  return env.Undefined();
}

// (src typed array, srcIndex, dst typed array, dstIndex, count): element conversions between
// float32 and the 16-bit float formats, bounds-checked in elements of each side.
template <typename S, typename D, void (*Convert)(const S*, D*, size_t)>
Napi::Value ConvertJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t *s, *d;
  size_t sl, dl;
  if (!Bytes(env, info[0], &s, &sl) || !Bytes(env, info[2], &d, &dl)) return Fail(env, "expected typed arrays");
  size_t si = size_t(Num(info, 1)), di = size_t(Num(info, 3)), n = size_t(Num(info, 4));
  if ((si + n) * sizeof(S) > sl || (di + n) * sizeof(D) > dl) return Fail(env, "conversion outside a buffer");
  Convert(reinterpret_cast<S*>(s) + si, reinterpret_cast<D*>(d) + di, n);
  return env.Undefined();
}

// (dtype, buf, byteOffset, count, divisor)
Napi::Value DivideByJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* d;
  size_t dl;
  if (!Bytes(env, info[1], &d, &dl)) return Fail(env, "expected a typed array");
  int dtype = int(Num(info, 0));
  size_t off = size_t(Num(info, 2)), n = size_t(Num(info, 3));
  if (off + n * DTypeSize(dtype) > dl) return Fail(env, "divideBy outside its buffer");
  DivideBy(dtype, d + off, n, Num(info, 4));
  return env.Undefined();
}

}  // namespace

void RegisterComm(Napi::Env env, Napi::Object exports) {
  exports.Set("commVersion", Napi::Number::New(env, 7));
  Napi::Object comm = Napi::Object::New(env);
  comm.Set("create", Napi::Function::New(env, CommCreate));
  comm.Set("createSegment", Napi::Function::New(env, CommCreateSegment));
  comm.Set("attachShmPeer", Napi::Function::New(env, CommAttachShmPeer));
  comm.Set("attachTcpPeer", Napi::Function::New(env, CommAttachTcpPeer));
  comm.Set("run", Napi::Function::New(env, CommRun));
  comm.Set("lastError", Napi::Function::New(env, CommLastError));
  comm.Set("abort", Napi::Function::New(env, CommAbort));
  comm.Set("notifyPosted", Napi::Function::New(env, CommNotifyPosted));
  comm.Set("posted", Napi::Function::New(env, CommPosted));
  comm.Set("threadCpuNs", Napi::Function::New(env, ThreadCpuNs));
  comm.Set("destroy", Napi::Function::New(env, CommDestroy));
  comm.Set("markFailed", Napi::Function::New(env, CommMarkFailed));
  comm.Set("shmUnlink", Napi::Function::New(env, ShmUnlink));
  comm.Set("tcpListen", Napi::Function::New(env, TcpListen));
  comm.Set("tcpAccept", Napi::Function::New(env, TcpAccept));
  comm.Set("tcpConnect", Napi::Function::New(env, TcpConnect));
  comm.Set("sockTransfer", Napi::Function::New(env, SockTransfer));
  comm.Set("sockPoll", Napi::Function::New(env, SockPoll));
  comm.Set("sockReadSome", Napi::Function::New(env, SockReadSome));
  comm.Set("closeFd", Napi::Function::New(env, CloseFd));
  comm.Set("reduceInto", Napi::Function::New(env, ReduceInto));
  comm.Set("addressOf", Napi::Function::New(env, AddressOf));
  comm.Set("bf16ToF32", Napi::Function::New(env, ConvertJs<uint16_t, float, Bf16ToF32>));
  comm.Set("f32ToBf16", Napi::Function::New(env, ConvertJs<float, uint16_t, F32ToBf16>));
  comm.Set("f16ToF32", Napi::Function::New(env, ConvertJs<uint16_t, float, F16ToF32>));
  comm.Set("f32ToF16", Napi::Function::New(env, ConvertJs<float, uint16_t, F32ToF16>));
  comm.Set("divideBy", Napi::Function::New(env, DivideByJs));
  exports.Set("comm", comm);
}
