// Shared declarations of the communication hot loops. The TypeScript side (the comm worker
// thread) decides what moves where; this code moves the bytes, reduces them, and waits with a
// deadline. Everything here runs on the comm worker's thread except Abort(), which the main
// thread may call to end a wait early.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace rtcomm {

enum DType : int { kF32 = 0, kF64 = 1, kI32 = 2, kBF16 = 3, kU8 = 4, kF16 = 5 };
enum RedOp : int { kSum = 0, kProd = 1, kMin = 2, kMax = 3 };
enum Status : int {
  kOk = 0,
  kTimeout = 1,
  kPeerDied = 2,
  kPeerClosed = 3,
  kMismatch = 4,
  kIoError = 5,
  kAborted = 6,
  kStalled = 7,
};

size_t DTypeSize(int dtype);
// dst[i] = a[i] (op) b[i] for n elements; dst may alias a or b.
void Reduce(int dtype, int op, void* dst, const void* a, const void* b, size_t n);
// The same, then divided by `divisor` in the same pass (an average's last step); 1 divides nothing.
void ReduceDivide(int dtype, int op, void* dst, const void* a, const void* b, size_t n, double divisor);
void Bf16ToF32(const uint16_t* src, float* dst, size_t n);
void F32ToBf16(const float* src, uint16_t* dst, size_t n);
// IEEE 754 half precision (float16), rounding to nearest even; used by DDP's fp16 compression.
void F16ToF32(const uint16_t* src, float* dst, size_t n);
void F32ToF16(const float* src, uint16_t* dst, size_t n);
void DivideBy(int dtype, void* buf, size_t n, double divisor);

// A futex word that one process sleeps on and its peers ring. It lives in its owner's segment.
struct alignas(64) Doorbell {
  std::atomic<uint32_t> seq;
  uint32_t pad0[15];
  std::atomic<uint32_t> waiters;
  uint32_t pad1[15];
};

constexpr uint32_t kMaxSlots = 64;

// One direction of a same-host pair: a ring of slots in the receiver's segment. The sender
// advances head after filling a slot, the receiver advances tail after consuming one.
struct ChannelHeader {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) uint32_t sizes[kMaxSlots];
};

struct SegmentHeader {
  uint64_t magic;
  uint32_t world;
  uint32_t owner;
  uint32_t slot_bytes;
  uint32_t slots;
  int32_t owner_pid;
  // Set when the owner gave up on the group after a failure, so that same-host peers stop
  // waiting for it at once instead of at their own timeout.
  std::atomic<uint32_t> failed;
  alignas(64) Doorbell bell;
};

constexpr uint64_t kSegmentMagic = 0x3143544e49524752ull;  // "RGRINTC1"
constexpr size_t kSegmentHeaderBytes = 4096;
constexpr size_t kChannelHeaderBytes = 4096;
constexpr size_t kMessageHeaderBytes = 16;

size_t SegmentBytes(uint32_t world, uint32_t slot_bytes, uint32_t slots);
ChannelHeader* ChannelAt(void* segment, uint32_t sender, uint32_t slot_bytes, uint32_t slots);
uint8_t* SlotsAt(void* segment, uint32_t sender, uint32_t slot_bytes, uint32_t slots);

void Ring(Doorbell* bell);
// Sleeps on bell until it is rung after `seen` was read, or `timeout_us` passes.
void SleepOn(Doorbell* bell, uint32_t seen, int64_t timeout_us);

// One TCP connection to a peer. A peer may have several (RINGTORCH_TCP_STREAMS): a large message
// is then cut into one contiguous part per stream, each sent with its own header, so that the
// parts move in parallel (each stream's part on its own thread, see CommRun).
struct Stream {
  int fd = -1;
  uint8_t rx_header[16];
  std::vector<uint8_t> stage;  // receive staging for reductions
  size_t stage_fill = 0;
};

constexpr int kMaxStreams = 8;

struct Peer {
  int kind = 0;  // 0 unconnected, 1 shared memory, 2 tcp
  SegmentHeader* header = nullptr;
  ChannelHeader* out = nullptr;
  uint8_t* out_slots = nullptr;
  ChannelHeader* in = nullptr;
  uint8_t* in_slots = nullptr;
  Doorbell* bell = nullptr;
  int pid = 0;
  int pidfd = -1;
  bool dead = false;
  bool failed = false;
  // TCP connections (kind 2); every peer has at least one entry, whose stage_fill a same-host
  // transfer points at (and never uses).
  std::vector<Stream> streams = std::vector<Stream>(1);
};

struct Mapping {
  void* addr = nullptr;
  size_t bytes = 0;
};

struct Comm {
  int rank = 0;
  int world = 0;
  uint32_t slot_bytes = 0;
  uint32_t slots = 0;
  int64_t spin_us = 50;
  size_t streaming_bytes = size_t(1) << 62;
  // TCP messages of at least this many bytes are cut across all of a peer's streams.
  size_t stripe_bytes = size_t(1) << 62;
  void* segment = nullptr;
  size_t segment_bytes = 0;
  Doorbell* bell = nullptr;
  std::vector<Peer> peers;
  std::vector<Mapping> mappings;
  std::atomic<bool> aborted{false};
  // Operations the main thread has posted to the comm worker (CommNotifyPosted). A batch run with
  // a wake_seen (RunTransfers) returns as soon as this differs from it, so that the worker takes a
  // newly posted send or receive into the batch at once instead of at its next stall.
  std::atomic<uint32_t> posted{0};
  std::string last_error;
};

// One piece of a scattered message: `bytes` at `ptr`, starting `start` bytes into the message.
struct Segment {
  uint8_t* ptr;
  size_t bytes;
  size_t start;
};

// One send or receive inside a batch. progress counts bytes of the stream (16-byte header
// included) so that a batch can be resumed after kStalled.
struct Transfer {
  int peer;
  int stream;  // which of the peer's TCP connections carries it (0 for shared memory)
  int kind;  // 0 send, 1 receive (copy), 2 receive and reduce
  uint8_t* buf;
  size_t bytes;
  // A message scattered over several buffers (DDP reduces gradients where they lie): `nsegs`
  // pieces in stream order, and `buf` unused. Such a message reduces in place (local == itself).
  const Segment* segs;
  size_t nsegs;
  // A reduce that completes the reduction divides by this (an average); 1: none.
  double divisor;
  const uint8_t* local;  // reduce operand (== buf for in-place)
  int dtype;
  int op;
  uint32_t tag;
  uint32_t code;
  // A send may be gated on a receive of the same batch into the same bytes: it forwards only
  // what that receive has already reduced (still hot in cache), so a ring's last reduce step
  // and first gather step run as one pipelined pass. -1: not gated.
  int gate;
  double* progress;
  // Received bytes waiting in the peer's stage for the rest of their element; kept in the Peer
  // so that a batch resumed after kStalled finds them.
  size_t* stage_fill;
};

// Progresses `ops` until all are done, one fails, `timeout_ms` passes, nothing moved for
// `stall_ms` (kStalled), or `cancel` is set (kAborted). Explanations go to `err`, so that several
// threads may run disjoint batches of one communicator at once. With wake_seen >= 0 (and a stall),
// also returns kStalled once comm->posted differs from it (the main thread posted more work) and
// once a transfer of the batch finished while others remain (so that the caller reports it now).
int RunTransfers(Comm* comm, std::vector<Transfer>& ops, int64_t timeout_ms, int64_t stall_ms, std::string& err,
                 const std::atomic<bool>* cancel, int64_t wake_seen = -1);

// Numbers per transfer in CommRun's descriptor: 15 that link.ts fills, then one progress counter
// per stream for a message cut across several TCP connections.
constexpr int kBaseFields = 15;
constexpr int kFields = kBaseFields + kMaxStreams;

// The transfers as they travel: each TCP message of at least comm.stripe_bytes cut into one part
// per stream of its peer (`first[i]`..`first[i + 1]` are message i's parts in `flows`), the
// parts' progress counted in `desc`; `parts` owns the scattered parts' segment lists. Returns an
// explanation when a gated send cannot follow its receive part by part.
std::string Stripe(Comm& c, const std::vector<Transfer>& ops, double* desc, std::deque<std::vector<Segment>>& parts,
                   std::vector<Transfer>& flows, std::vector<size_t>& first);
// Runs the flows, each stream past the first on a thread of its own, and sets each cut
// message's progress in `desc` to done once all its parts are. Sets comm.last_error.
int RunStriped(Comm& c, const std::vector<Transfer>& ops, const std::vector<Transfer>& flows,
               const std::vector<size_t>& first, double* desc, int64_t timeout_ms, int64_t stall_ms, int64_t wake_seen = -1);

int64_t NowMicros();
bool PeerAlive(Peer& p);
int OpenPidfd(int pid);
void* CreateSegment(const std::string& name, size_t bytes, std::string& err);
void* OpenSegment(const std::string& name, size_t bytes, std::string& err);

int Listen(const std::string& host, int* port, std::string& err);
int Accept(int listen_fd, int timeout_ms, int buffer_bytes, std::string& err);
int Connect(const std::string& host, int port, int timeout_ms, int buffer_bytes, std::string& err);
int TransferExact(int fd, uint8_t* buf, size_t n, bool writing, int timeout_ms, std::string& err);
int PollReadable(const int32_t* fds, size_t n, int timeout_ms, uint8_t* ready, std::string& err);
long ReadAvailable(int fd, uint8_t* buf, size_t n);

}  // namespace rtcomm
