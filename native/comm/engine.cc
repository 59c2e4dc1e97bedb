// Progresses a batch of sends and receives together until all are done, so that a rank can
// send to one neighbour while it receives from another without either side blocking the other.
// Each message is a 16-byte header (tag, code, payload length) and the payload; a receiver
// checks the header against what it expects, which turns a desynchronised job into an error
// instead of silent corruption.
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "comm/comm.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace rtcomm {

namespace {

struct MessageHeader {
  uint32_t tag;
  uint32_t code;
  uint64_t bytes;
};
static_assert(sizeof(MessageHeader) == kMessageHeaderBytes, "header layout");

constexpr int64_t kYieldMicros = 2000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

inline size_t Total(const Transfer& t) { return kMessageHeaderBytes + t.bytes; }
inline size_t Progress(const Transfer& t) { return size_t(*t.progress); }
inline bool Done(const Transfer& t) { return Progress(t) >= Total(t) && (t.kind != 2 || *t.stage_fill == 0); }
inline bool IsSend(const Transfer& t) { return t.kind == 0; }
inline size_t PayloadDone(const Transfer& t) { return Progress(t) > kMessageHeaderBytes ? Progress(t) - kMessageHeaderBytes : 0; }

// How many payload bytes a send may have sent so far: all, or what its gate has received.
inline size_t SendLimit(const Transfer& t, const std::vector<Transfer>& ops) {
  return t.gate < 0 ? t.bytes : std::min(t.bytes, PayloadDone(ops[size_t(t.gate)]));
}

std::string Describe(const Transfer& t) {
  std::string dir = IsSend(t) ? "sending " : "receiving ";
  std::string prep = IsSend(t) ? " to rank " : " from rank ";
  size_t done = Progress(t) > kMessageHeaderBytes ? Progress(t) - kMessageHeaderBytes : 0;
  return dir + std::to_string(t.bytes) + " bytes" + prep + std::to_string(t.peer) + " (" + std::to_string(done) +
         " done)";
}

int CheckHeader(std::string& err, const Transfer& t, const MessageHeader& h) {
  if (h.tag == t.tag && h.code == t.code && h.bytes == t.bytes) return kOk;
  err = "mismatch: rank " + std::to_string(t.peer) + " sent tag " + std::to_string(h.tag) + " code " +
                  std::to_string(h.code) + " bytes " + std::to_string(h.bytes) + "; this rank expected tag " +
                  std::to_string(t.tag) + " code " + std::to_string(t.code) + " bytes " + std::to_string(t.bytes);
  return kMismatch;
}

// Messages of at least comm->streaming_bytes do not fit in cache anyway: their copies bypass it
// (non-temporal stores), which saves the read an ordinary store to an uncached line costs first.

void StreamCopy(uint8_t* dst, const uint8_t* src, size_t n) {
#if defined(__x86_64__)
  size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
  if (n < head + 64) return (void)memcpy(dst, src, n);
  memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  size_t body = n & ~size_t(63);
  for (size_t i = 0; i < body; i += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  _mm_sfence();
  memcpy(dst + body, src + body, n - body);
#else
  memcpy(dst, src, n);
#endif
}

// Index of the segment that holds payload byte `offset` (segments are never empty).
size_t SegmentAt(const Transfer& t, size_t offset) {
  size_t lo = 0, hi = t.nsegs;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    (t.segs[mid].start <= offset ? lo : hi) = mid;
  }
  return lo;
}

// Calls fn(dst, local, n, done) for the bytes [offset, offset + n) of t's payload, once per
// buffer they lie in (once for a contiguous message); `done` counts the bytes already visited.
template <typename F>
void ForEachRange(const Transfer& t, size_t offset, size_t n, F&& fn) {
  if (t.segs == nullptr) return fn(t.buf + offset, t.local + offset, n, size_t(0));
  for (size_t i = SegmentAt(t, offset), done = 0; done < n && i < t.nsegs; i++) {
    const Segment& s = t.segs[i];
    size_t at = offset + done - s.start;
    size_t k = std::min(s.bytes - at, n - done);
    fn(s.ptr + at, s.ptr + at, k, done);
    done += k;
  }
}

// Where payload byte `offset` lies, and how many bytes from there lie in the same buffer.
uint8_t* ContiguousAt(const Transfer& t, size_t offset, size_t* run) {
  if (t.segs == nullptr) {
    *run = t.bytes - offset;
    return t.buf + offset;
  }
  const Segment& s = t.segs[SegmentAt(t, offset)];
  *run = s.start + s.bytes - offset;
  return s.ptr + (offset - s.start);
}

void Consume(Comm* c, Transfer& t, const uint8_t* src, size_t offset, size_t n) {
  if (n == 0) return;
  if (t.kind == 1) {
    bool stream = t.bytes >= c->streaming_bytes;
    ForEachRange(t, offset, n, [&](uint8_t* dst, const uint8_t*, size_t k, size_t done) {
      if (stream) StreamCopy(dst, src + done, k);
      else memcpy(dst, src + done, k);
    });
  } else {
    size_t es = DTypeSize(t.dtype);
    ForEachRange(t, offset, n, [&](uint8_t* dst, const uint8_t* local, size_t k, size_t done) {
      ReduceDivide(t.dtype, t.op, dst, local, src + done, k / es, t.divisor);
    });
  }
}

// Fills as many free slots as there are; returns whether it moved anything.
bool ShmSend(Comm* c, Transfer& t, Peer& p, size_t limit) {
  bool moved = false;
  uint64_t head = p.out->head.load(std::memory_order_relaxed);
  while (!Done(t) && head - p.out->tail.load(std::memory_order_acquire) < c->slots) {
    uint8_t* slot = p.out_slots + (head % c->slots) * size_t(c->slot_bytes);
    size_t prog = Progress(t), used = 0;
    size_t sent = prog == 0 ? 0 : prog - kMessageHeaderBytes;
    size_t n = std::min(size_t(c->slot_bytes) - (prog == 0 ? kMessageHeaderBytes : 0), limit - sent);
    // A gated send waits for a whole slot's worth (or the end) so that slots stay full.
    if (prog > 0 && n == 0) break;
    if (t.gate >= 0 && limit < t.bytes && n < size_t(c->slot_bytes) - (prog == 0 ? kMessageHeaderBytes : 0)) break;
    if (prog == 0) {
      MessageHeader h{t.tag, t.code, t.bytes};
      memcpy(slot, &h, sizeof(h));
      used = kMessageHeaderBytes;
    }
    ForEachRange(t, sent, n, [&](uint8_t* from, const uint8_t*, size_t k, size_t done) { memcpy(slot + used + done, from, k); });
    p.out->sizes[head % c->slots] = uint32_t(used + n);
    head++;
    p.out->head.store(head, std::memory_order_release);
    Ring(p.bell);
    *t.progress = double(prog + used + n);
    moved = true;
  }
  return moved;
}

int ShmRecv(Comm* c, Transfer& t, Peer& p, bool& moved, std::string& err) {
  uint64_t tail = p.in->tail.load(std::memory_order_relaxed);
  while (!Done(t) && p.in->head.load(std::memory_order_acquire) > tail) {
    const uint8_t* slot = p.in_slots + (tail % c->slots) * size_t(c->slot_bytes);
    size_t size = p.in->sizes[tail % c->slots];
    size_t prog = Progress(t), used = 0;
    if (size > c->slot_bytes || (prog == 0 && size < kMessageHeaderBytes)) {
      err = "mismatch: rank " + std::to_string(t.peer) + " wrote a malformed slot";
      return kMismatch;
    }
    if (prog == 0) {
      MessageHeader h;
      memcpy(&h, slot, sizeof(h));
      if (int st = CheckHeader(err, t, h)) return st;
      used = kMessageHeaderBytes;
    }
    size_t got = prog == 0 ? 0 : prog - kMessageHeaderBytes;
    size_t n = size - used;
    if (got + n > t.bytes) {
      err = "mismatch: rank " + std::to_string(t.peer) + " sent more bytes than the " +
                      std::to_string(t.bytes) + " this rank expected";
      return kMismatch;
    }
    Consume(c, t, slot + used, got, n);
    tail++;
    p.in->tail.store(tail, std::memory_order_release);
    Ring(p.bell);
    *t.progress = double(prog + used + n);
    moved = true;
  }
  return kOk;
}

int SocketError(std::string& err, const Transfer& t, int code) {
  if (code == ECONNRESET || code == EPIPE) {
    err = "rank " + std::to_string(t.peer) + " closed its connection (" + strerror(code) + ") while " + Describe(t);
    return kPeerClosed;
  }
  err = std::string("socket error ") + strerror(code) + " while " + Describe(t);
  return kIoError;
}

int TcpSend(Transfer& t, Stream& p, size_t limit, bool& moved, std::string& err) {
  while (!Done(t)) {
    size_t prog = Progress(t);
    MessageHeader h{t.tag, t.code, t.bytes};
    constexpr size_t kMaxIov = 64;
    iovec iov[kMaxIov];
    size_t cnt = 0;
    size_t sent = prog < kMessageHeaderBytes ? 0 : prog - kMessageHeaderBytes;
    if (prog < kMessageHeaderBytes) iov[cnt++] = {reinterpret_cast<uint8_t*>(&h) + prog, kMessageHeaderBytes - prog};
    else if (sent >= limit) return kOk;
    ForEachRange(t, sent, limit - sent, [&](uint8_t* from, const uint8_t*, size_t k, size_t) {
      if (cnt < kMaxIov && k > 0) iov[cnt++] = {from, k};
    });
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = cnt;
    ssize_t r = sendmsg(p.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
      *t.progress = double(prog + size_t(r));
      moved = true;
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return kOk;
    return SocketError(err, t, r < 0 ? errno : EPIPE);
  }
  return kOk;
}

int TcpRecv(Comm* c, Transfer& t, Stream& p, bool& moved, std::string& err) {
  const size_t es = t.kind == 2 ? DTypeSize(t.dtype) : 1;
  while (!Done(t)) {
    size_t prog = Progress(t);
    ssize_t r;
    if (prog < kMessageHeaderBytes) {
      r = recv(p.fd, p.rx_header + prog, kMessageHeaderBytes - prog, MSG_DONTWAIT);
    } else if (t.kind == 1) {
      size_t run;
      uint8_t* at = ContiguousAt(t, prog - kMessageHeaderBytes, &run);
      r = recv(p.fd, at, run, MSG_DONTWAIT);
    } else {
      size_t want = std::min(p.stage.size() - (*t.stage_fill), Total(t) - prog - (*t.stage_fill));
      r = want == 0 ? 0 : recv(p.fd, p.stage.data() + (*t.stage_fill), want, MSG_DONTWAIT);
      if (r > 0 || want == 0) {
        // Reduce whole elements only; a split element waits in the stage for its other bytes.
        if (r > 0) (*t.stage_fill) += size_t(r);
        size_t whole = (*t.stage_fill) - (*t.stage_fill) % es;
        if (whole == 0 && want == 0) {
          err = "a message from rank " + std::to_string(t.peer) + " ended inside an element";
          return kMismatch;
        }
        Consume(c, t, p.stage.data(), prog - kMessageHeaderBytes, whole);
        memmove(p.stage.data(), p.stage.data() + whole, (*t.stage_fill) - whole);
        (*t.stage_fill) -= whole;
        *t.progress = double(prog + whole);
        moved = true;
        continue;
      }
    }
    if (r == 0) {
      err = "rank " + std::to_string(t.peer) + " closed its connection (did it exit?) while " + Describe(t);
      return kPeerClosed;
    }
    if (r == -1) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return kOk;
      return SocketError(err, t, errno);
    }
    moved = true;
    if (prog < kMessageHeaderBytes) {
      *t.progress = double(prog + size_t(r));
      if (Progress(t) == kMessageHeaderBytes) {
        MessageHeader h;
        memcpy(&h, p.rx_header, sizeof(h));
        if (int st = CheckHeader(err, t, h)) return st;
      }
      continue;
    }
    *t.progress = double(prog + size_t(r));
  }
  return kOk;
}

// Whether the main thread posted an operation since the batch's caller read `wake_seen` (-1: not asked).
bool PostedSince(const Comm* c, int64_t wake_seen) {
  return wake_seen >= 0 && c->posted.load(std::memory_order_seq_cst) != uint32_t(wake_seen);
}

bool ShmReady(Comm* c, const Transfer& t, const Peer& p) {
  if (IsSend(t)) return p.out->head.load(std::memory_order_relaxed) - p.out->tail.load(std::memory_order_acquire) < c->slots;
  return p.in->head.load(std::memory_order_acquire) > p.in->tail.load(std::memory_order_relaxed);
}

}  // namespace

int RunTransfers(Comm* c, std::vector<Transfer>& ops, int64_t timeout_ms, int64_t stall_ms, std::string& err,
                 const std::atomic<bool>* cancel, int64_t wake_seen) {
  const int64_t start = NowMicros();
  const int64_t deadline = start + timeout_ms * 1000;
  int64_t last_progress = start, last_liveness = start;
  std::vector<char> active(ops.size());
  std::vector<pollfd> pfds;
  for (auto& t : ops) {
    Peer& p = c->peers[t.peer];
    if (t.kind == 2 && p.kind == 2 && p.streams[size_t(t.stream)].stage.empty()) p.streams[size_t(t.stream)].stage.resize(1 << 18);
  }
  size_t done_at_start = 0;
  for (auto& t : ops) done_at_start += Done(t) ? 1 : 0;
  // Set when a peer of an active transfer was found gone, until the loop polls once more: what a
  // rank wrote before it exited or gave up stays in its slots, and a rank that sent its last
  // message and closed the group at once (its flag set after the message) had been reported
  // failed to a receiver that polled before the message landed and checked after the flag.
  bool peer_gone = false;
  for (;;) {
    bool all_done = true, moved = false, any_tcp = false, any_shm = false;
    size_t done = 0;
    for (size_t i = 0; i < ops.size(); i++) {
      Transfer& t = ops[i];
      active[i] = 0;
      if (Done(t)) {
        done++;
        continue;
      }
      all_done = false;
      bool earlier = false;  // one message at a time per connection and direction: each is FIFO
      for (size_t j = 0; j < i && !earlier; j++) {
        earlier = ops[j].peer == t.peer && ops[j].stream == t.stream && IsSend(ops[j]) == IsSend(t) && !Done(ops[j]);
      }
      if (earlier) continue;
      active[i] = 1;
      Peer& p = c->peers[t.peer];
      int st = kOk;
      if (p.kind == 1) {
        any_shm = true;
        if (IsSend(t)) moved |= ShmSend(c, t, p, SendLimit(t, ops));
        else st = ShmRecv(c, t, p, moved, err);
      } else if (p.kind == 2) {
        any_tcp = true;
        Stream& s = p.streams[size_t(t.stream)];
        st = IsSend(t) ? TcpSend(t, s, SendLimit(t, ops), moved, err) : TcpRecv(c, t, s, moved, err);
      } else {
        err = "no transport to rank " + std::to_string(t.peer);
        return kIoError;
      }
      if (st != kOk) return st;
    }
    if (all_done) return kOk;
    if (wake_seen >= 0 && stall_ms > 0 && done > done_at_start) return kStalled;
    int64_t now = NowMicros();
    if (moved) {
      last_progress = now;
      peer_gone = false;
      continue;
    }
    if (c->aborted.load() || (cancel && cancel->load())) {
      err = "aborted";
      return kAborted;
    }
    if (now >= deadline) {
      // Described only here: this loop runs between every two slots of a transfer, and building
      // the text each time cost the comm thread an eighth of its time in DDP.
      std::string waiting;
      for (size_t i = 0; i < ops.size(); i++) {
        if (active[i]) waiting += (waiting.empty() ? "" : "; ") + Describe(ops[i]);
      }
      err = "timed out " + waiting;
      return kTimeout;
    }
    if (stall_ms > 0 && now - last_progress >= stall_ms * 1000) return kStalled;
    if (stall_ms > 0 && PostedSince(c, wake_seen)) return kStalled;
    if (now - last_liveness >= 10000 || peer_gone) {
      last_liveness = now;
      const bool polled_since_gone = peer_gone;
      peer_gone = false;
      for (size_t i = 0; i < ops.size(); i++) {
        Peer& p = c->peers[ops[i].peer];
        if (!active[i] || p.kind != 1 || PeerAlive(p)) continue;
        if (!polled_since_gone) {
          peer_gone = true;  // poll the slots once more (PeerAlive's acquire makes earlier writes visible)
          break;
        }
        err = "rank " + std::to_string(ops[i].peer) + " (pid " + std::to_string(p.pid) + ") " +
                        (p.dead ? "exited" : "gave up on the group after its own failure") + " while " +
                        Describe(ops[i]);
        return p.dead ? kPeerDied : kPeerClosed;
      }
      if (peer_gone) continue;
    }
    if (now - last_progress < c->spin_us) {
      for (int k = 0; k < 32; k++) CpuRelax();
      continue;
    }
    // Then yield for a while: on a busy machine the peer may be waiting for this very core,
    // and a futex sleep would add a full wake-up to every hand-off. Not in a batch that posts
    // end (wake_seen: a pipeline's sends and receives, waiting between compute of several ms):
    // it sleeps at once, since the poster and the peers ring this rank's bell, and yielding kept
    // its thread runnable on every core the ranks' compute needed (bench/pipeline.ts: the other
    // threads' CPU per 1F1B step fell from 13-41 ms to 8-23 ms, on a shared 2-core machine).
    if (wake_seen < 0 && now - last_progress < c->spin_us + kYieldMicros) {
      sched_yield();
      continue;
    }
    int64_t slice = std::min<int64_t>(deadline - now, 10000);
    if (stall_ms > 0) slice = std::min<int64_t>(slice, std::max<int64_t>(1, last_progress + stall_ms * 1000 - now));
    if (any_tcp) {
      pfds.clear();
      for (size_t i = 0; i < ops.size(); i++) {
        Peer& p = c->peers[ops[i].peer];
        if (active[i] && p.kind == 2) pfds.push_back({p.streams[size_t(ops[i].stream)].fd, short(IsSend(ops[i]) ? POLLOUT : POLLIN), 0});
      }
      // With a same-host peer in the batch too, poll without sleeping for a while so that its
      // doorbell-less progress is seen promptly, then settle into 1 ms naps.
      // A batch that new posts end (wake_seen) must notice them: no nap longer than 1 ms then.
      int ms = any_shm ? (now - last_progress < 2000 ? 0 : 1) : int(std::max<int64_t>(1, slice / 1000));
      if (wake_seen >= 0) ms = std::min(ms, 1);
      poll(pfds.data(), pfds.size(), ms);
      if (any_shm && ms == 0) sched_yield();
      continue;
    }
    c->bell->waiters.fetch_add(1, std::memory_order_seq_cst);
    uint32_t seen = c->bell->seq.load(std::memory_order_seq_cst);
    bool ready = c->aborted.load();
    for (size_t i = 0; i < ops.size() && !ready; i++) {
      if (active[i]) ready = ShmReady(c, ops[i], c->peers[ops[i].peer]);
    }
    // CommNotifyPosted rings this bell after counting the post: read after `seen`, so a post
    // counted before the sleep is seen here and one counted after it wakes the sleep.
    ready = ready || (stall_ms > 0 && PostedSince(c, wake_seen));
    if (!ready) SleepOn(c->bell, seen, slice);
    c->bell->waiters.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace rtcomm
