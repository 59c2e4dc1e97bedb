// The mpi backend's communication thread: the one thread that calls MPI (MPI_THREAD_FUNNELED, so
// no MPI lock is taken), running queued operations in the order the main thread posted them.
// Collectives run as MPI's blocking calls, which take Open MPI's tuned algorithms (its
// nonblocking ones go through libnbc, several times slower on shared memory), while the main
// thread computes. Point-to-point operations start nonblocking and progress between collectives.
#pragma once
#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace rtmpi {

enum Kind {
  kAllReduce = 1,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kScatter,
  kGather,
  kAllToAll,
  kBarrier,
  kSend,
  kRecv,
  kSplit,
  kFinalize,
  // The hierarchical all-reduce's step between hosts: waits until gate[0] (b, two int32s in
  // shared memory) is set by the thread that reduced inside the host (1: go; -1: abandoned),
  // at most `tag` milliseconds; all-reduces `a` in place; then sets gate[1] (1 done, -1 failed)
  // for the thread that gathers inside the host. Both sides run without the main thread.
  kGatedAllReduce,
};

/** One posted operation. Buffers are raw addresses the main thread keeps alive until it is done. */
struct Op {
  int id = 0;
  int kind = 0;
  int comm = 0;
  uint8_t* a = nullptr;
  uint8_t* b = nullptr;
  int count = 0;
  int dtype = 4;
  int op = 0;
  int root = 0;
  int peer = 0;
  int tag = 0;
  std::vector<int> v;  // all-to-all: send counts, send displacements, receive counts, receive displacements; split: color, key, group id
  MPI_Request req = MPI_REQUEST_NULL;
};

struct InitInfo {
  std::string error;
  int rank = 0;
  int size = 0;
  std::string library;
  std::vector<int> pids;
  std::vector<std::string> hosts;
  int tagUpperBound = 0;
};

/** Starts the thread, which initialises MPI; blocks until it did. `notify` runs on the thread after operations finish. */
InitInfo Start(std::function<void()> notify);
/** Queues `op` (its id set by the caller). */
void Post(Op op);
/**
 * Waits up to `ms` milliseconds for operation `id`. Returns false if it has not finished; true if it
 * has (then forgotten), with `error` set to MPI's message when it failed.
 */
bool Wait(int id, double ms, std::string& error);

}  // namespace rtmpi
