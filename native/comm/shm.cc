// Shared-memory segments and the doorbells processes on one host wake each other with.
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "comm/comm.h"

namespace rtcomm {

int64_t NowMicros() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

static size_t ChannelStride(uint32_t slot_bytes, uint32_t slots) {
  return kChannelHeaderBytes + size_t(slot_bytes) * slots;
}

size_t SegmentBytes(uint32_t world, uint32_t slot_bytes, uint32_t slots) {
  return kSegmentHeaderBytes + size_t(world) * ChannelStride(slot_bytes, slots);
}

ChannelHeader* ChannelAt(void* segment, uint32_t sender, uint32_t slot_bytes, uint32_t slots) {
  return reinterpret_cast<ChannelHeader*>(static_cast<uint8_t*>(segment) + kSegmentHeaderBytes +
                                          size_t(sender) * ChannelStride(slot_bytes, slots));
}

uint8_t* SlotsAt(void* segment, uint32_t sender, uint32_t slot_bytes, uint32_t slots) {
  return reinterpret_cast<uint8_t*>(ChannelAt(segment, sender, slot_bytes, slots)) + kChannelHeaderBytes;
}

void Ring(Doorbell* bell) {
  bell->seq.fetch_add(1, std::memory_order_seq_cst);
  if (bell->waiters.load(std::memory_order_seq_cst) != 0) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell->seq), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
}

void SleepOn(Doorbell* bell, uint32_t seen, int64_t timeout_us) {
  if (timeout_us <= 0) return;
  timespec ts;
  ts.tv_sec = timeout_us / 1000000;
  ts.tv_nsec = (timeout_us % 1000000) * 1000;
  // Not FUTEX_PRIVATE: the word is shared between processes.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell->seq), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

bool PeerAlive(Peer& p) {
  if (p.dead || p.failed) return false;
  if (p.header && p.header->failed.load(std::memory_order_acquire)) {
    p.failed = true;
    return false;
  }
  if (p.pidfd >= 0) {
    pollfd pfd{p.pidfd, POLLIN, 0};
    // A pidfd turns readable when the process exits, zombie or not.
    if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) p.dead = true;
  } else if (p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH) {
    p.dead = true;
  }
  return !p.dead;
}

int OpenPidfd(int pid) {
#ifdef SYS_pidfd_open
  long fd = syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -1 : int(fd);
#else
  (void)pid;
  return -1;
#endif
}

// Creates (exclusively, owner-only) and maps a segment. Returns nullptr and sets err on failure.
void* CreateSegment(const std::string& name, size_t bytes, std::string& err) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    err = "shm_open(" + name + ") failed: " + strerror(errno);
    return nullptr;
  }
  if (ftruncate(fd, off_t(bytes)) != 0) {
    err = "ftruncate(" + name + ") failed: " + strerror(errno) + " (is /dev/shm large enough?)";
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  }
  void* addr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (addr == MAP_FAILED) {
    err = "mmap(" + name + ") failed: " + strerror(errno);
    shm_unlink(name.c_str());
    return nullptr;
  }
  return addr;
}

void* OpenSegment(const std::string& name, size_t bytes, std::string& err) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    err = "shm_open(" + name + ") failed: " + strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || size_t(st.st_size) != bytes) {
    err = "shared-memory segment " + name + " has an unexpected size";
    close(fd);
    return nullptr;
  }
  void* addr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (addr == MAP_FAILED) {
    err = "mmap(" + name + ") failed: " + strerror(errno);
    return nullptr;
  }
  return addr;
}

}  // namespace rtcomm
