// Tensor memory that recycles itself. Each block is handed to JavaScript as a SharedArrayBuffer
// over a backing store the block keeps for its whole life: every output made from the block is a
// new SharedArrayBuffer object over that same store, and the block is free again when the store's
// reference count is back to the arena's own reference, that is, when the garbage collector has
// found every SharedArrayBuffer over it dead, in every thread that held one. A callback after each
// collection (AfterCollection) checks that on the blocks handed out and puts the dead ones back on
// a free list of their size class, to be handed out again without a page fault or a trip to malloc.
//
// Why not a new backing store per output, with a deleter that returns the block (as before): the
// store is a separate V8 object, made and, when the buffer dies, destroyed with its deleter call
// under this file's lock, inside the scavenge; a buffer over a kept store measured about 130-250 ns
// of CPU per output against 500-600 ns with a store of its own (arenaCostBench, README).
//
// The policy (when to collect, how much to keep) is TypeScript's: src/tensor/arena.ts. This file
// only keeps blocks and counts. Its state is allocated once and never destroyed, and no V8 callback
// touches it: an isolate torn down at exit only drops its references to the kept stores.
//
// Blocks are not reported to V8 as external memory. When they were, a few large tensors past V8's
// 64 MB external-memory soft limit started an incremental marking, and past the hard limit a full
// collection inside the allocation: a loop over 16 MB tensors ran 60x slower than its kernel.
// arena.ts decides when to collect, young and full, from the counters kept here.
#include <node_api.h>
#include <sys/mman.h>
#include <v8.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "pool/arena.h"
#include "kernels/napi_register.h"

namespace rt {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHeader = 64;  // keeps data 64-byte aligned after the header
constexpr size_t kMmapFrom = 256 * 1024;
constexpr int kClasses = 4 * 48;  // 4 classes per power of two, up to 2^48 bytes
// Collections between two checks of the blocks that survived two checks (see Reclaim).
constexpr int kOldCheckEvery = 16;

// Per-isolate accounting of what JavaScript holds. Never freed: a block may outlive the thread
// that allocated it (handed to another worker), and reclaiming it still updates these counters.
struct Owner {
  std::atomic<int64_t> held{0};  // bytes handed out and not yet reclaimed
  // Bytes handed out to this isolate since its last arenaMark() (only its thread touches it). Per
  // isolate, since a collection finds only its own isolate's dead handles: with one count for all
  // threads, one thread's collections would reset the budget of another, which would then take
  // fresh blocks instead of collecting, and cycle through far more memory than stays in cache.
  double since_mark = 0;
};

// Sits in the kHeader bytes before a block's data (static_assert below).
struct Block {
  size_t capacity;  // usable bytes after the header
  int cls;
  bool mapped;
  Owner* owner;
  // The block's backing store, the arena's reference: each SharedArrayBuffer handed out over the
  // block holds another. Its deleter does nothing (the arena frees the memory); it is replaced
  // only while the block is free, when a request of another byte length in the class takes it.
  std::shared_ptr<v8::BackingStore> store;
  int checks;  // checks after collections the block survived since it was handed out
};
static_assert(sizeof(Block) <= kHeader, "the block header must fit before the data");

void NoDelete(void*, size_t, void*) {}

// Everything below behind `mu`. Allocated once and never destroyed: a thread may still reclaim or
// allocate while the process exits, after static destructors have run.
struct State {
  std::mutex mu;
  std::vector<void*> free_lists[kClasses];  // oldest first: reuse takes from the back
  // Per class, the fewest free blocks it held since the last arenaDecay(): blocks nobody needed.
  size_t low_water[kClasses] = {0};
  // Blocks handed out: `young` since the last check or two, `old` once they survived two checks
  // (held tensors, mostly in V8's old generation, found dead only by a full collection).
  std::vector<void*> young, old;
  int reclaims = 0;
  // Counters read by TypeScript through a Float64Array (see ArenaStats in arena.h).
  double stats[kStatCount] = {0};
  double limit_bytes = 512.0 * 1024 * 1024;
};
State& S = *new State();

int ClassOf(size_t bytes) {
  if (bytes <= 256) return int((bytes + 63) / 64) - 1;  // 64, 128, 192, 256
  const int p = 63 - __builtin_clzll(bytes - 1);       // 2^p < bytes <= 2^(p+1)
  const size_t quarter = size_t(1) << (p - 2);
  const size_t step = ((bytes - 1) - (size_t(1) << p)) / quarter;  // 0..3
  return 4 + (p - 8) * 4 + int(step);
}

size_t CapacityOf(int cls) {
  if (cls < 4) return size_t(cls + 1) * 64;
  const int p = (cls - 4) / 4 + 8;
  const size_t step = size_t((cls - 4) % 4) + 1;
  return (size_t(1) << p) + step * (size_t(1) << (p - 2));
}

Block* HeaderOf(void* data) { return reinterpret_cast<Block*>(static_cast<char*>(data) - kHeader); }

// Only for a free block: no SharedArrayBuffer refers to its store.
void ReleaseToOs(void* data) {
  Block* b = HeaderOf(data);
  b->~Block();
  if (b->mapped) munmap(b, b->capacity + kHeader);
  else std::free(b);
}

void* FreshBlock(int cls, Owner* owner, bool* zeroed) {
  const size_t cap = CapacityOf(cls);
  void* base = nullptr;
  bool mapped = false;
  if (cap + kHeader >= kMmapFrom) {
    base = mmap(nullptr, cap + kHeader, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    mapped = true;
    *zeroed = true;
    // Operands and outputs of 2 MiB and more on transparent huge pages where THP is `madvise`:
    // a GEMM at 2048² walks rows 8 KiB apart, one 4 KiB TLB entry each. A kernel that aligns
    // large anonymous mappings to 2 MiB gives all but the block's tail whole huge pages.
    if (cap >= (size_t(2) << 20)) madvise(base, cap + kHeader, MADV_HUGEPAGE);
  } else {
    if (posix_memalign(&base, kAlign, cap + kHeader) != 0) return nullptr;
    *zeroed = false;
  }
  Block* b = new (base) Block();
  b->capacity = cap;
  b->cls = cls;
  b->mapped = mapped;
  b->owner = owner;
  return static_cast<char*>(base) + kHeader;
}

// A block no SharedArrayBuffer refers to any more goes back to its free list (under mu).
void Return(void* data) {
  Block* b = HeaderOf(data);
  const int64_t cap = int64_t(b->capacity);
  b->owner->held.fetch_sub(cap, std::memory_order_relaxed);
  S.stats[kStatHeld] -= cap;
  S.stats[kStatReturned] += cap;
  // Over the limit, the oldest blocks of the largest other classes make room: what a loop just
  // dropped is what it will ask for next.
  for (int c = kClasses - 1; c >= 0 && S.stats[kStatFree] + cap > S.limit_bytes; c--) {
    if (c == b->cls) continue;
    auto& list = S.free_lists[c];
    size_t drop = 0;
    while (drop < list.size() && S.stats[kStatFree] + cap > S.limit_bytes) {
      const double bytes = double(HeaderOf(list[drop])->capacity);
      S.stats[kStatFree] -= bytes;
      S.stats[kStatReleasedToOs] += bytes;
      ReleaseToOs(list[drop++]);
    }
    list.erase(list.begin(), list.begin() + drop);
    if (S.low_water[c] > list.size()) S.low_water[c] = list.size();
  }
  if (S.stats[kStatFree] + cap > S.limit_bytes) {
    S.stats[kStatReleasedToOs] += cap;
    ReleaseToOs(data);
    return;
  }
  S.free_lists[b->cls].push_back(data);
  S.stats[kStatFree] += cap;
}

// Checks the blocks of `list`: dead ones (store referenced by the arena alone) are returned, those
// that survived two checks move to `older` when given. Order within the lists does not matter.
void Check(std::vector<void*>& list, std::vector<void*>* older) {
  size_t keep = 0;
  for (size_t i = 0; i < list.size(); i++) {
    void* data = list[i];
    Block* b = HeaderOf(data);
    // use_count() is 1 only once every buffer over the store is gone, and then nothing but the
    // arena can make a new one: a stale read can only delay a return, never make a live one.
    if (b->store.use_count() == 1) Return(data);
    else if (older && ++b->checks >= 2) older->push_back(data);
    else list[keep++] = data;
  }
  list.resize(keep);
}

void Reclaim(bool all) {
  if (all || ++S.reclaims % kOldCheckEvery == 0) Check(S.old, nullptr);
  Check(S.young, &S.old);
}

// After every collection of an isolate that took blocks, V8's own included (a synchronous loop of
// small outputs may never run dry and ask for one): the blocks the collection found dead return at
// once, as they did when each buffer had a deleter. Array buffers are swept inside the collection
// (arena.ts sets --no-concurrent-array-buffer-sweeping), so their references are gone by now.
void AfterCollection(v8::Isolate*, v8::GCType type, v8::GCCallbackFlags, void*) {
  std::lock_guard<std::mutex> lock(S.mu);
  Reclaim(type == v8::kGCTypeMarkSweepCompact);
}

Owner* OwnerOf(napi_env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  if (data) return static_cast<Owner*>(data);
  Owner* owner = new Owner();
  napi_set_instance_data(env, owner, nullptr, nullptr);
  v8::Isolate::GetCurrent()->AddGCEpilogueCallback(AfterCollection, nullptr, v8::GCType(v8::kGCTypeScavenge | v8::kGCTypeMarkSweepCompact));
  return owner;
}

double NumberArg(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

// arenaAlloc(byteLength, zero, budget) -> SharedArrayBuffer | null. Null when the size class has
// no free block and `budget` bytes or more were handed out (fresh or recycled) since the last
// arenaMark(): the caller then collects, reclaims, marks, and asks again, so that a loop cycles
// through about `budget` bytes that stay in cache.
napi_value ArenaAllocFn(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  const double requested = argc > 0 ? NumberArg(env, argv[0]) : -1;
  bool zero = true;
  double budget = 1.0 / 0.0;
  if (argc > 1) napi_get_value_bool(env, argv[1], &zero);
  if (argc > 2) napi_get_value_double(env, argv[2], &budget);
  if (!(requested >= 0) || requested > 9.0e15) {
    napi_throw_range_error(env, nullptr, "arenaAlloc: the byte length must be a finite number >= 0");
    return nullptr;
  }
  const size_t bytes = size_t(requested);
  const int cls = ClassOf(bytes < 64 ? 64 : bytes);
  Owner* owner = OwnerOf(env);
  void* data = nullptr;
  bool zeroed = false;
  bool dry = false;
  // Held-bytes counters and high-water marks, under the lock the caller holds.
  auto note_held = [owner](double cap) {
    S.stats[kStatHeld] += cap;
    owner->since_mark += cap;
    if (S.stats[kStatHeld] + S.stats[kStatFree] > S.stats[kStatHighWater]) S.stats[kStatHighWater] = S.stats[kStatHeld] + S.stats[kStatFree];
    if (S.stats[kStatHeld] > S.stats[kStatHeldHighWater]) S.stats[kStatHeldHighWater] = S.stats[kStatHeld];
  };
  {
    // One lock here and one below, once the block's buffer exists (a fresh block's OS call between
    // them runs outside both).
    std::lock_guard<std::mutex> lock(S.mu);
    auto& list = S.free_lists[cls];
    if (!list.empty()) {
      data = list.back();
      list.pop_back();
      if (S.low_water[cls] > list.size()) S.low_water[cls] = list.size();
      Block* b = HeaderOf(data);
      b->owner = owner;
      const double cap = double(b->capacity);
      S.stats[kStatFree] -= cap;
      S.stats[kStatRecycled] += cap;
      note_held(cap);
    } else {
      dry = !(owner->since_mark < budget);
    }
  }
  if (dry) {
    napi_value null;
    napi_get_null(env, &null);
    return null;
  }
  const bool fresh = data == nullptr;
  if (fresh) {
    data = FreshBlock(cls, owner, &zeroed);
    if (data == nullptr) {
      napi_throw_error(env, nullptr, "arenaAlloc: out of memory");
      return nullptr;
    }
  }
  if (zero && !zeroed) std::memset(data, 0, bytes);
  Block* b = HeaderOf(data);
  owner->held.fetch_add(int64_t(b->capacity), std::memory_order_relaxed);
  // The block is ours alone here (fresh, or free: its store's only reference is b->store).
  if (!b->store || b->store->ByteLength() != bytes) b->store = v8::SharedArrayBuffer::NewBackingStore(data, bytes, NoDelete, nullptr);
  b->checks = 0;
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  v8::Local<v8::SharedArrayBuffer> sab = v8::SharedArrayBuffer::New(isolate, b->store);
  // Only now, with a buffer over the store, may a check see the block: put in `young` before, a
  // collection in another thread (a worker's, running its callback) could find the store referenced
  // by the arena alone and return the block while this call hands it out, and would read b->store
  // while it is being replaced above.
  {
    std::lock_guard<std::mutex> lock(S.mu);
    if (fresh) {
      S.stats[kStatFresh] += double(b->capacity);
      note_held(double(b->capacity));
    }
    S.young.push_back(data);
  }
  return reinterpret_cast<napi_value>(*sab);
}

// arenaStats(out: Float64Array): copies the counters (ArenaStat order) into out.
napi_value ArenaStatsFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  napi_typedarray_type type;
  size_t length = 0;
  void* out = nullptr;
  if (argc < 1 || napi_get_typedarray_info(env, argv[0], &type, &length, &out, nullptr, nullptr) != napi_ok || type != napi_float64_array) {
    napi_throw_type_error(env, nullptr, "arenaStats: expected a Float64Array");
    return nullptr;
  }
  double all[kStatCount];
  {
    std::lock_guard<std::mutex> lock(S.mu);
    Reclaim(true);  // blocks V8's own collections found dead count as returned, not held
    std::memcpy(all, S.stats, sizeof(all));
  }
  all[kStatSinceMark] = OwnerOf(env)->since_mark;
  std::memcpy(out, all, sizeof(double) * (length < size_t(kStatCount) ? length : size_t(kStatCount)));
  return nullptr;
}

// arenaHeldHere() -> bytes: what this thread's JavaScript holds (blocks it allocated, alive or not
// yet reclaimed). The arena's policy collects on this, not on every thread's total: a block another
// thread holds is not freed by this thread's collections.
napi_value ArenaHeldHereFn(napi_env env, napi_callback_info) {
  napi_value out;
  napi_create_double(env, double(OwnerOf(env)->held.load(std::memory_order_relaxed)), &out);
  return out;
}

// arenaMark(): starts a new count of bytes handed out to the calling thread (it collected).
napi_value ArenaMarkFn(napi_env env, napi_callback_info) {
  OwnerOf(env)->since_mark = 0;
  return nullptr;
}

// arenaDecay(): gives back to the OS half (rounded up) of the blocks each class kept unused since
// the last call, oldest first. Called once per collection the arena asks for, so sizes a loop no
// longer uses drain away in a few collections while sizes it uses every step stay.
napi_value ArenaDecayFn(napi_env, napi_callback_info) {
  std::lock_guard<std::mutex> lock(S.mu);
  for (int c = 0; c < kClasses; c++) {
    auto& list = S.free_lists[c];
    const size_t drop = std::min(list.size(), (S.low_water[c] + 1) / 2);
    for (size_t i = 0; i < drop; i++) {
      const double bytes = double(HeaderOf(list[i])->capacity);
      S.stats[kStatFree] -= bytes;
      S.stats[kStatReleasedToOs] += bytes;
      ReleaseToOs(list[i]);
    }
    list.erase(list.begin(), list.begin() + drop);
    S.low_water[c] = list.size();
  }
  return nullptr;
}

// arenaTrim(): gives every free block back to the operating system.
napi_value ArenaTrimFn(napi_env, napi_callback_info) {
  std::lock_guard<std::mutex> lock(S.mu);
  for (auto& list : S.free_lists) {
    for (void* data : list) {
      S.stats[kStatReleasedToOs] += double(HeaderOf(data)->capacity);
      ReleaseToOs(data);
    }
    list.clear();
    S.low_water[&list - S.free_lists] = 0;
  }
  S.stats[kStatFree] = 0;
  return nullptr;
}

// arenaSetLimit(bytes): the most free bytes kept for reuse; blocks returned beyond it go to the OS.
napi_value ArenaSetLimitFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  const double v = argc > 0 ? NumberArg(env, argv[0]) : -1;
  if (!(v >= 0)) {
    napi_throw_range_error(env, nullptr, "arenaSetLimit: expected a byte count >= 0");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(S.mu);
  S.limit_bytes = v;
  return nullptr;
}

// arenaResetHighWater(): the high-water mark restarts from what is held and free now.
napi_value ArenaResetHighWaterFn(napi_env, napi_callback_info) {
  std::lock_guard<std::mutex> lock(S.mu);
  S.stats[kStatHighWater] = S.stats[kStatHeld] + S.stats[kStatFree];
  S.stats[kStatHeldHighWater] = S.stats[kStatHeld];
  return nullptr;
}

}  // namespace

void RegisterArenaCost(napi_env env, napi_value exports);  // arena_cost.cc

void RegisterArena(napi_env env, napi_value exports) {
  Define(env, exports, "arenaAlloc", ArenaAllocFn);
  Define(env, exports, "arenaStats", ArenaStatsFn);
  Define(env, exports, "arenaMark", ArenaMarkFn);
  Define(env, exports, "arenaHeldHere", ArenaHeldHereFn);
  Define(env, exports, "arenaTrim", ArenaTrimFn);
  Define(env, exports, "arenaDecay", ArenaDecayFn);
  Define(env, exports, "arenaSetLimit", ArenaSetLimitFn);
  Define(env, exports, "arenaResetHighWater", ArenaResetHighWaterFn);
  RegisterArenaCost(env, exports);
}

}  // namespace rt
