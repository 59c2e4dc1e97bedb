// Several TCP connections per peer: one socket, driven by one thread, moves a few GB/s at most,
// because each byte costs the sending and the receiving thread a copy through the kernel. A
// large message is therefore cut into one contiguous part per connection, each with its own
// header, and each connection's parts are driven by their own thread. Both ends cut a message
// the same way because the cut depends only on its length and the stream count, which the
// ranks agreed on when they connected (src/distributed/engine/mesh.ts).
#include <algorithm>
#include <atomic>
#include <thread>

#include "comm/comm.h"

namespace rtcomm {

namespace {

// Part boundaries fall on multiples of 64 bytes: whole elements of every dtype, whole cache lines.
constexpr size_t kPartAlign = 64;

size_t PartBytes(size_t bytes, size_t streams) {
  size_t even = (bytes + streams - 1) / streams;
  return (even + kPartAlign - 1) / kPartAlign * kPartAlign;
}

// The segments of [lo, lo + n) of a scattered message, their starts counted from lo.
std::vector<Segment> Slice(const Transfer& t, size_t lo, size_t n) {
  std::vector<Segment> out;
  for (size_t i = 0; i < t.nsegs; i++) {
    const Segment& s = t.segs[i];
    size_t a = std::max(s.start, lo), b = std::min(s.start + s.bytes, lo + n);
    if (a < b) out.push_back({s.ptr + (a - s.start), b - a, a - lo});
  }
  return out;
}

bool Failed(int st) { return st != kOk && st != kStalled; }

}  // namespace

std::string Stripe(Comm& c, const std::vector<Transfer>& ops, double* desc, std::deque<std::vector<Segment>>& parts,
                   std::vector<Transfer>& flows, std::vector<size_t>& first) {
  first.assign(ops.size() + 1, 0);
  for (size_t i = 0; i < ops.size(); i++) {
    first[i] = flows.size();
    const Transfer& t = ops[i];
    Peer& p = c.peers[size_t(t.peer)];
    size_t n = p.kind == 2 ? p.streams.size() : 1;
    if (n <= 1 || t.bytes < c.stripe_bytes || t.bytes <= kPartAlign) {
      flows.push_back(t);
      continue;
    }
    size_t chunk = PartBytes(t.bytes, n);
    for (size_t s = 0, lo = 0; s < n && lo < t.bytes; s++, lo += chunk) {
      Transfer u = t;
      u.stream = int(s);
      u.bytes = std::min(chunk, t.bytes - lo);
      u.progress = &desc[i * kFields + kBaseFields + s];
      u.stage_fill = &p.streams[s].stage_fill;
      if (t.segs) {
        parts.push_back(Slice(t, lo, u.bytes));
        u.segs = parts.back().data();
        u.nsegs = parts.back().size();
        u.buf = u.segs[0].ptr;
        u.local = u.buf;
      } else {
        u.buf = t.buf + lo;
        u.local = t.local + lo;
      }
      flows.push_back(u);
    }
  }
  first[ops.size()] = flows.size();
  for (size_t i = 0; i < ops.size(); i++) {
    if (ops[i].gate < 0) continue;
    size_t g = size_t(ops[i].gate), ni = first[i + 1] - first[i], ng = first[g + 1] - first[g];
    // A send forwards what its receive reduced, part k from part k: they must be cut alike.
    if (ni != ng || (ni > 1 && ops[i].bytes != ops[g].bytes)) {
      return "a gated send of " + std::to_string(ops[i].bytes) + " bytes cannot follow a receive of " +
             std::to_string(ops[g].bytes) + " bytes cut into other parts";
    }
    for (size_t k = 0; k < ni; k++) flows[first[i] + k].gate = int(first[g] + k);
  }
  return "";
}

int RunStriped(Comm& c, const std::vector<Transfer>& ops, const std::vector<Transfer>& flows,
               const std::vector<size_t>& first, double* desc, int64_t timeout_ms, int64_t stall_ms, int64_t wake_seen) {
  // Group k holds the TCP parts on stream k; group 0 also everything on shared memory.
  std::vector<std::vector<Transfer>> groups(kMaxStreams);
  std::vector<size_t> where(flows.size()), group(flows.size());
  for (size_t f = 0; f < flows.size(); f++) {
    const Transfer& t = flows[f];
    group[f] = c.peers[size_t(t.peer)].kind == 2 ? size_t(t.stream) : 0;
    where[f] = groups[group[f]].size();
    groups[group[f]].push_back(t);
  }
  for (size_t f = 0; f < flows.size(); f++) {
    // A part and its gate share a stream (Stripe cut them alike), hence a group.
    if (flows[f].gate >= 0) groups[group[f]][where[f]].gate = int(where[size_t(flows[f].gate)]);
  }
  std::vector<size_t> used;
  for (size_t k = 0; k < groups.size(); k++) {
    if (!groups[k].empty()) used.push_back(k);
  }
  std::vector<int> status(groups.size(), kOk);
  std::vector<std::string> errs(groups.size());
  std::atomic<bool> cancel{false};
  std::atomic<int> first_failed{-1};
  auto run = [&](size_t k) {
    status[k] = RunTransfers(&c, groups[k], timeout_ms, stall_ms, errs[k], &cancel, wake_seen);
    if (Failed(status[k])) {
      int none = -1;
      first_failed.compare_exchange_strong(none, int(k));
      cancel.store(true);
    }
  };
  std::vector<std::thread> threads;
  for (size_t u = 1; u < used.size(); u++) threads.emplace_back(run, used[u]);
  if (!used.empty()) run(used[0]);
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < ops.size(); i++) {
    if (first[i + 1] - first[i] <= 1) continue;
    bool done = true;
    for (size_t f = first[i]; f < first[i + 1] && done; f++) {
      const Transfer& t = flows[f];
      done = size_t(*t.progress) >= kMessageHeaderBytes + t.bytes && (t.kind != 2 || *t.stage_fill == 0);
    }
    desc[i * kFields + 11] = done ? double(kMessageHeaderBytes + ops[i].bytes) : 0;
  }
  int failed = first_failed.load();
  if (failed >= 0) {
    c.last_error = errs[size_t(failed)];
    return status[size_t(failed)];
  }
  for (size_t k : used) {
    if (status[k] == kStalled) return kStalled;
  }
  return kOk;
}

}  // namespace rtcomm
