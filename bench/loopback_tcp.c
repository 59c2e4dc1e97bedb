/*
 * The ceiling of bench/allreduce.ts's TCP row on this machine: two processes that each send and
 * receive MB megabytes at once over one loopback TCP connection (what each rank of a 2-rank
 * all-reduce moves, half in its reduce-scatter and half in its all-gather), with the socket
 * options ringtorch's TCP transport sets by default (native/comm/tcp.cc: TCP_NODELAY, buffers left to
 * the kernel's autotuning; RINGTORCH_TCP_BUFFER_KB=N runs this with N KiB buffers as well). No
 * reduction, no protocol: the kernel's two copies per byte and nothing else.
 * Built and run by bench/allreduce.ts: cc -O2 -pthread -o loopback_tcp loopback_tcp.c && ./loopback_tcp MB ...
 * Prints "loopback NMB: time ms min=… median=…" per size (7 rounds), the peers' format.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fd;
static size_t bytes;
static char* out;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* sender(void* unused) {
  (void)unused;
  for (size_t done = 0; done < bytes;) {
    ssize_t r = send(fd, out + done, bytes - done, MSG_NOSIGNAL);
    if (r <= 0) exit(2);
    done += (size_t)r;
  }
  return NULL;
}

static void tune(int s) {
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const char* kb = getenv("RINGTORCH_TCP_BUFFER_KB");
  int buf = kb ? atoi(kb) * 1024 : 0;
  if (buf > 0) {
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  }
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, (struct sockaddr*)&addr, len) != 0 || listen(listener, 1) != 0) return 1;
  getsockname(listener, (struct sockaddr*)&addr, &len);
  pid_t child = fork();
  if (child == 0) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    tune(fd);
    if (connect(fd, (struct sockaddr*)&addr, len) != 0) return 1;
  } else {
    fd = accept(listener, NULL, NULL);
    tune(fd);
  }
  for (int s = 1; s < argc; s++) {
    int mb = atoi(argv[s]);
    bytes = (size_t)mb << 20;
    out = malloc(bytes);
    char* in = malloc(bytes);
    memset(out, 1, bytes);
    memset(in, 0, bytes);
    int reps = 64 / mb > 3 ? 64 / mb : 3;
    double times[7];
    for (int r = -1; r < 7; r++) {  // round -1 warms up
      double t0 = now();
      for (int i = 0; i < reps; i++) {
        pthread_t th;
        pthread_create(&th, NULL, sender, NULL);
        for (size_t done = 0; done < bytes;) {
          ssize_t k = recv(fd, in + done, bytes - done, 0);
          if (k <= 0) return 2;
          done += (size_t)k;
        }
        pthread_join(th, NULL);
      }
      if (r >= 0) times[r] = (now() - t0) * 1000.0 / reps;
    }
    qsort(times, 7, sizeof(double), cmp);
    if (child != 0) printf("loopback %dMB: time ms min=%.3f median=%.3f\n", mb, times[0], times[3]);
    free(out);
    free(in);
  }
  if (child != 0) waitpid(child, NULL, 0);
  return 0;
}
