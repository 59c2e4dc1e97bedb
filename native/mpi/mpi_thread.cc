#include "mpi_thread.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace rtmpi {
namespace {

// Never destroyed: a process may exit (process.exit, an uncaught error) while the thread waits on
// these, and glibc's condition variable destructor would then wait for it forever.
struct Shared {
  std::mutex mutex;
  std::condition_variable posted;    // wakes the thread: an operation was queued
  std::condition_variable finished;  // wakes Wait: an operation finished
  std::deque<Op> queue;
  std::unordered_map<int, std::string> results;
  std::function<void()> notify;
};
Shared& g = *new Shared;

// Touched by the thread alone.
std::vector<MPI_Comm>& g_comms = *new std::vector<MPI_Comm>;  // index: the process group's id; MPI_COMM_NULL where this rank is not a member
std::vector<Op>& g_active = *new std::vector<Op>;  // point-to-point operations in flight

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
    default: return MPI_UNSIGNED_CHAR;  // uint8, and the bytes of every move
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

void Finish(int id, std::string error) {
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    g.results[id] = std::move(error);
  }
  g.finished.notify_all();
}

std::string Named(const char* what, int rc) { return rc == MPI_SUCCESS ? std::string() : std::string(what) + " failed: " + ErrorText(rc); }

/** Runs a collective to its end, or starts a point-to-point operation. Returns false for the latter. */
bool Run(Op& op, std::string& error) {
  MPI_Comm comm = op.comm >= 0 && size_t(op.comm) < g_comms.size() ? g_comms[size_t(op.comm)] : MPI_COMM_NULL;
  if (comm == MPI_COMM_NULL && op.kind != kSplit) {
    error = "internal: no MPI communicator for process group " + std::to_string(op.comm);
    return true;
  }
  MPI_Datatype t = TypeOf(op.dtype);
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  switch (op.kind) {
    case kAllReduce:
      error = Named("MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, op.a, op.count, t, OpOf(op.op), comm));
      return true;
    case kGatedAllReduce: {
      auto* gate = reinterpret_cast<int32_t*>(op.b);
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(op.tag);
      int32_t go = 0;
      // The other side is a JavaScript thread, whose Atomics.notify cannot wake this one: poll.
      while ((go = __atomic_load_n(&gate[0], __ATOMIC_ACQUIRE)) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (go == 0)
        error = "the reduce-scatter inside the host did not finish within " + std::to_string(op.tag) + " ms";
      else if (go < 0)
        error = "abandoned: the reduce-scatter inside the host failed";
      else
        error = Named("MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, op.a, op.count, t, OpOf(op.op), comm));
      __atomic_store_n(&gate[1], error.empty() ? 1 : -1, __ATOMIC_RELEASE);
      return true;
    }
    case kBroadcast:
      error = Named("MPI_Bcast", MPI_Bcast(op.a, op.count, t, op.root, comm));
      return true;
    case kReduce:
      error = Named("MPI_Reduce", rank == op.root ? MPI_Reduce(MPI_IN_PLACE, op.a, op.count, t, OpOf(op.op), op.root, comm)
                                                  : MPI_Reduce(op.a, nullptr, op.count, t, OpOf(op.op), op.root, comm));
      return true;
    case kAllGather:
      error = Named("MPI_Allgather", MPI_Allgather(op.a, op.count, t, op.b, op.count, t, comm));
      return true;
    case kReduceScatter:
      error = Named("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(op.a, op.b, op.count, t, OpOf(op.op), comm));
      return true;
    case kScatter:
      error = Named("MPI_Scatter", MPI_Scatter(op.a, op.count, t, op.b, op.count, t, op.root, comm));
      return true;
    case kGather:
      error = Named("MPI_Gather", MPI_Gather(op.a, op.count, t, op.b, op.count, t, op.root, comm));
      return true;
    case kAllToAll: {
      size_t n = op.v.size() / 4;
      const int* v = op.v.data();
      error = Named("MPI_Alltoallv", MPI_Alltoallv(op.a, v, v + n, t, op.b, v + 2 * n, v + 3 * n, t, comm));
      return true;
    }
    case kBarrier:
      error = Named("MPI_Barrier", MPI_Barrier(comm));
      return true;
    case kSend:
    case kRecv: {
      int rc = op.kind == kSend ? MPI_Isend(op.a, op.count, t, op.peer, op.tag, comm, &op.req)
                                : MPI_Irecv(op.a, op.count, t, op.peer, op.tag, comm, &op.req);
      error = Named(op.kind == kSend ? "MPI_Isend" : "MPI_Irecv", rc);
      return rc != MPI_SUCCESS;
    }
    case kSplit: {
      // Every rank of the job creates every group in the same order (as newGroup asks), so
      // a split of the whole job's communicator matches up; key = global rank keeps group ranks in order.
      MPI_Comm made = MPI_COMM_NULL;
      int rc = MPI_Comm_split(g_comms[0], op.v[0] ? 0 : MPI_UNDEFINED, op.v[1], &made);
      if (rc == MPI_SUCCESS && made != MPI_COMM_NULL) MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
      if (g_comms.size() <= size_t(op.v[2])) g_comms.resize(size_t(op.v[2]) + 1, MPI_COMM_NULL);
      g_comms[size_t(op.v[2])] = made;
      error = Named("MPI_Comm_split", rc);
      return true;
    }
    default:
      error = "internal: unknown MPI operation " + std::to_string(op.kind);
      return true;
  }
}

/** Tests the point-to-point operations in flight; reports those done. Returns how many finished. */
int Progress() {
  int finished = 0;
  for (size_t i = 0; i < g_active.size();) {
    int done = 0;
    int rc = MPI_Test(&g_active[i].req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) {
      Finish(g_active[i].id, Named(g_active[i].kind == kSend ? "MPI_Isend" : "MPI_Irecv", rc));
      g_active.erase(g_active.begin() + long(i));
      finished++;
    } else {
      i++;
    }
  }
  return finished;
}

void Loop() {
  int idle = 0;
  for (;;) {
    Op op;
    bool have = false;
    {
      std::unique_lock<std::mutex> lock(g.mutex);
      if (g.queue.empty()) {
        if (g_active.empty()) {
          g.posted.wait(lock, [] { return !g.queue.empty(); });
        } else if (idle > 64) {
          // A receive whose sender is late: poll less often, but wake at once for new work.
          g.posted.wait_for(lock, std::chrono::microseconds(idle > 4096 ? 1000 : 50));
        }
      }
      if (!g.queue.empty()) {
        op = std::move(g.queue.front());
        g.queue.pop_front();
        have = true;
      }
    }
    int finished = 0;
    if (have) {
      if (op.kind == kFinalize) {
        for (MPI_Comm& c : g_comms)
          if (c != MPI_COMM_NULL && c != MPI_COMM_WORLD) MPI_Comm_free(&c);
        int rc = MPI_Finalize();
        Finish(op.id, Named("MPI_Finalize", rc));
        return;
      }
      std::string error;
      if (Run(op, error)) {
        Finish(op.id, std::move(error));
        finished++;
      } else {
        g_active.push_back(std::move(op));
      }
    }
    finished += Progress();
    idle = have || finished > 0 ? 0 : idle + 1;
    if (finished > 0) g.notify();
  }
}

}  // namespace

InitInfo Start(std::function<void()> notify) {
  g.notify = std::move(notify);
  InitInfo info;
  std::mutex m;
  std::condition_variable cv;
  bool ready = false;
  // Leaked on purpose: at exit after a failure the thread may still sit in MPI, and a joinable
  // std::thread's destructor would abort the process.
  new std::thread([&] {
    // Open MPI loads its transports as plugins that need libmpi's symbols in the global scope;
    // Node loads this addon (and with it libmpi) with RTLD_LOCAL, so load libmpi again globally.
    dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    bool ok = rc == MPI_SUCCESS;
    if (!ok) {
      info.error = "MPI_Init_thread failed: " + ErrorText(rc);
    } else {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      g_comms.push_back(MPI_COMM_WORLD);
      MPI_Comm_rank(MPI_COMM_WORLD, &info.rank);
      MPI_Comm_size(MPI_COMM_WORLD, &info.size);
      char version[MPI_MAX_LIBRARY_VERSION_STRING];
      int vlen = 0;
      MPI_Get_library_version(version, &vlen);
      info.library.assign(version, size_t(vlen));
      int* ub = nullptr;
      int found = 0;
      MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
      info.tagUpperBound = found ? *ub : 32767;
      // Every rank's pid and host, so that a rank can tell that a peer on its host has died.
      char host[MPI_MAX_PROCESSOR_NAME] = {0};
      int hlen = 0;
      MPI_Get_processor_name(host, &hlen);
      std::vector<char> hosts(size_t(info.size) * MPI_MAX_PROCESSOR_NAME);
      info.pids.resize(size_t(info.size));
      int pid = int(getpid());
      rc = MPI_Allgather(&pid, 1, MPI_INT, info.pids.data(), 1, MPI_INT, MPI_COMM_WORLD);
      if (rc == MPI_SUCCESS) rc = MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
      for (int r = 0; r < info.size; r++) info.hosts.emplace_back(hosts.data() + size_t(r) * MPI_MAX_PROCESSOR_NAME);
      if (rc != MPI_SUCCESS) {
        info.error = "MPI_Allgather of the ranks' pids failed: " + ErrorText(rc);
        ok = false;
      }
    }
    {
      // Notified under the lock: once Start sees `ready` it returns and `cv` is gone.
      std::lock_guard<std::mutex> lock(m);
      ready = true;
      cv.notify_all();
    }
    if (ok) Loop();
  });
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return ready; });
  return info;
}

void Post(Op op) {
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    g.queue.push_back(std::move(op));
  }
  g.posted.notify_one();
}

bool Wait(int id, double ms, std::string& error) {
  std::unique_lock<std::mutex> lock(g.mutex);
  auto found = [&] { return g.results.count(id) > 0; };
  if (!found() && ms > 0) g.finished.wait_for(lock, std::chrono::microseconds(int64_t(ms * 1000)), found);
  auto it = g.results.find(id);
  if (it == g.results.end()) return false;
  error = std::move(it->second);
  g.results.erase(it);
  return true;
}

}  // namespace rtmpi
