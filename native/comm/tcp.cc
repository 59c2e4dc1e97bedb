// Blocking-with-deadline socket helpers used while connections are set up. The handshake logic
// (who connects to whom, the token proof) lives in TypeScript; this only moves bytes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "comm/comm.h"

namespace rtcomm {

static void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// buffer_bytes 0 leaves the socket buffers to the kernel's autotuning, which grows them with the
// connection's bandwidth-delay product up to net.ipv4.tcp_{r,w}mem's maximum. Setting SO_SNDBUF or
// SO_RCVBUF turns that off for the socket and caps it at net.core.{r,w}mem_max (4 MiB on Debian),
// below the bandwidth-delay product of a fast network with any distance in it. On loopback the
// all-reduce measured the same either way (README, "TCP opens ...").
void TuneSocket(int fd, int buffer_bytes) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (buffer_bytes > 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  SetNonBlocking(fd);
}

static bool Resolve(const std::string& host, int port, sockaddr_storage& out, socklen_t& len, std::string& err) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    err = "cannot resolve " + host + ": " + gai_strerror(rc);
    return false;
  }
  memcpy(&out, res->ai_addr, res->ai_addrlen);
  len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

// Listens on exactly `host` (never on all interfaces). Returns the fd, and the port through *port.
int Listen(const std::string& host, int* port, std::string& err) {
  sockaddr_storage addr;
  socklen_t len;
  if (!Resolve(host, *port, addr, len, err)) return -1;
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = std::string("socket() failed: ") + strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 128) != 0) {
    err = "cannot listen on " + host + ":" + std::to_string(*port) + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  sockaddr_storage bound;
  socklen_t blen = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
  *port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  SetNonBlocking(fd);
  return fd;
}

// Returns an accepted fd, -1 on timeout, -2 on error (err set).
int Accept(int listen_fd, int timeout_ms, int buffer_bytes, std::string& err) {
  pollfd pfd{listen_fd, POLLIN, 0};
  int rc = poll(&pfd, 1, timeout_ms);
  if (rc == 0) return -1;
  if (rc < 0) {
    err = std::string("poll() failed: ") + strerror(errno);
    return -2;
  }
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return -1;
    err = std::string("accept() failed: ") + strerror(errno);
    return -2;
  }
  TuneSocket(fd, buffer_bytes);
  return fd;
}

// One connection attempt. Returns the fd, or -1 (err set) so the caller can retry until its deadline.
int Connect(const std::string& host, int port, int timeout_ms, int buffer_bytes, std::string& err) {
  sockaddr_storage addr;
  socklen_t len;
  if (!Resolve(host, port, addr, len, err)) return -1;
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = std::string("socket() failed: ") + strerror(errno);
    return -1;
  }
  SetNonBlocking(fd);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  if (rc != 0 && errno != EINPROGRESS) {
    err = strerror(errno);
    close(fd);
    return -1;
  }
  if (rc != 0) {
    pollfd pfd{fd, POLLOUT, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) {
      err = "connect timed out";
      close(fd);
      return -1;
    }
    int soerr = 0;
    socklen_t sl = sizeof(soerr);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (soerr != 0) {
      err = strerror(soerr);
      close(fd);
      return -1;
    }
  }
  TuneSocket(fd, buffer_bytes);
  return fd;
}

// Moves exactly n bytes (send when writing, else receive) before the deadline. Returns kOk,
// kTimeout, kPeerClosed or kIoError.
int TransferExact(int fd, uint8_t* buf, size_t n, bool writing, int timeout_ms, std::string& err) {
  int64_t deadline = NowMicros() + int64_t(timeout_ms) * 1000;
  size_t done = 0;
  while (done < n) {
    ssize_t r = writing ? send(fd, buf + done, n - done, MSG_NOSIGNAL) : recv(fd, buf + done, n - done, 0);
    if (r > 0) {
      done += size_t(r);
      continue;
    }
    if (r == 0 && !writing) {
      err = "the peer closed the connection";
      return kPeerClosed;
    }
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      err = strerror(errno);
      return errno == ECONNRESET || errno == EPIPE ? kPeerClosed : kIoError;
    }
    int64_t left = deadline - NowMicros();
    if (left <= 0) {
      err = "timed out";
      return kTimeout;
    }
    pollfd pfd{fd, short(writing ? POLLOUT : POLLIN), 0};
    poll(&pfd, 1, int(left / 1000) + 1);
  }
  return kOk;
}

// Waits until one of `fds` can be read (data, hang-up or error: ready[i] = 1) or `timeout_ms`
// passes. Lets the transport set-up handshake many half-open connections at once, so that a
// silent one holds up nobody but itself. Returns how many are ready, or -1 (err set).
int PollReadable(const int32_t* fds, size_t n, int timeout_ms, uint8_t* ready, std::string& err) {
  std::vector<pollfd> pfds(n);
  for (size_t i = 0; i < n; i++) pfds[i] = pollfd{fds[i], POLLIN, 0};
  int rc = poll(pfds.data(), pfds.size(), timeout_ms);
  if (rc < 0 && errno != EINTR) {
    err = std::string("poll() failed: ") + strerror(errno);
    return -1;
  }
  int count = 0;
  for (size_t i = 0; i < n; i++) {
    ready[i] = rc > 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) ? 1 : 0;
    count += ready[i];
  }
  return count;
}

// Reads what has arrived on a non-blocking socket without waiting: the bytes read, 0 when
// nothing is there yet, -1 when the peer closed the connection or it failed.
long ReadAvailable(int fd, uint8_t* buf, size_t n) {
  if (n == 0) return 0;
  for (;;) {
    ssize_t r = recv(fd, buf, n, 0);
    if (r > 0) return long(r);
    if (r == 0) return -1;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

}  // namespace rtcomm
