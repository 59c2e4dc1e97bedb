// The tensor memory arena (arena.cc): size-class blocks, each with a backing store kept for its life.
#pragma once
#include <node_api.h>

namespace rt {

// Counters of arenaStats, in this order (src/tensor/arena.ts reads them by these indices).
enum ArenaStat {
  kStatHeld = 0,           // bytes of blocks JavaScript holds now
  kStatFree,               // bytes of blocks in the free lists
  kStatFresh,              // bytes ever taken from the OS
  kStatRecycled,           // bytes ever handed out again from a free list
  kStatReturned,           // bytes ever reclaimed (no SharedArrayBuffer over them left)
  kStatReleasedToOs,       // bytes given back to the OS (over the limit, or trimmed)
  kStatSinceMark,          // bytes handed out (fresh or recycled) to the calling thread since its last arenaMark()
  kStatHighWater,          // most held + free bytes at once since the last reset
  kStatHeldHighWater,      // most held bytes at once since the last reset
  kStatCount,
};

void RegisterArena(napi_env env, napi_value exports);

}  // namespace rt
