import type { Algorithm } from "./engine/messages.js";
import { parseAlgorithm } from "./engine/select.js";
import { MAX_TCP_STREAMS } from "./native.js";

/**
 * The environment variables ringtorch.distributed reads. The torchrun contract:
 *
 * | variable | meaning |
 * | --- | --- |
 * | MASTER_ADDR, MASTER_PORT | where the job's store listens (`env://`) |
 * | RANK, WORLD_SIZE | this process's rank and the number of processes |
 * | LOCAL_RANK, LOCAL_WORLD_SIZE | the same on this machine (informational here) |
 * | RINGTORCH_USE_AGENT_STORE=1 | ringrun hosts the store; rank 0 must not host one |
 * | RINGTORCH_STORE_TOKEN | the job's secret; the store and transports admit only its holders |
 * | RINGTORCH_STORE_TOKEN_FILE | a file holding it, private to the job's user (token_file.ts) |
 * | RINGTORCH_STORE_PREFIX | ringrun's per-attempt key prefix |
 *
 * Without RANK and WORLD_SIZE, a process that srun or mpirun started takes them from the engine's
 * own variables (util/scheduler_env.ts), and initProcessGroup sets the names above from them.
 *
 * Tuning and debugging:
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | RINGTORCH_TRANSPORT | auto | `tcp` forces TCP even between processes of one machine; `shm` requires shared memory |
 * | RINGTORCH_ALGO | auto | `ring`, `rhd` (recursive halving-doubling) or `tree` for every collective |
 * | RINGTORCH_DISTRIBUTED_DEBUG | OFF | `DETAIL` checks that all ranks call the same collective with the same shapes |
 * | RINGTORCH_TIMEOUT_MS | 1800000 | default timeout of init and of every collective |
 * | RINGTORCH_SOCKET_ADDR | the address that reaches the store | the one address TCP transports listen on |
 * | RINGTORCH_TCP_STREAMS | 1 | TCP connections per pair of ranks (1..8), each driven by its own thread for large messages; all ranks must agree. 1 by default: on 2 cores, 4 streams measured slower at 16–64 MB (bench/allreduce.ts) |
 * | RINGTORCH_TCP_STRIPE_KB | 1024 | TCP messages this large are cut into one part per stream (0: all but the smallest, for tests) |
 * | RINGTORCH_TCP_BUFFER_KB | 0 | each TCP socket's send and receive buffer (SO_SNDBUF/SO_RCVBUF; the kernel caps it at net.core.[rw]mem_max); 0 leaves them to the kernel's autotuning, which a fixed size turns off (native/comm/tcp.cc says what it measured) |
 * | RINGTORCH_SHM_SLOT_KB, RINGTORCH_SHM_SLOTS | 256, 8 | shared-memory ring: slot size and count per pair |
 * | RINGTORCH_SPIN_US | 50 | how long a waiting rank spins before it yields, then sleeps |
 * | RINGTORCH_STREAMING_KB | 8192 | received messages this large are written around the cache |
 * | RINGTORCH_PIPELINE_KB | 512 | piece size of pipelined (chain) broadcasts |
 * | RINGTORCH_INLINE | 1 | `0` sends synchronous collectives through the comm worker too (see inline_runner.ts) |
 * | RINGTORCH_MPI_ALLREDUCE | auto | backend "mpi" only: `auto` all-reduces on shared memory when every rank is on one host, `mpi` always on MPI, `shm` shared memory or an error (mpi/local_shm.ts) |
 */
export interface CommEnv {
  transport: "auto" | "shm" | "tcp";
  algorithm: Algorithm | null;
  debugDetail: boolean;
  timeoutMs: number | undefined;
  socketAddr: string | undefined;
  tcpStreams: number;
  stripeBytes: number;
  tcpBufferBytes: number;
  slotBytes: number;
  slots: number;
  spinUs: number;
  streamingBytes: number;
  pipelineBytes: number;
}

export function readCommEnv(env: NodeJS.ProcessEnv = process.env): CommEnv {
  const transport = (env.RINGTORCH_TRANSPORT ?? "auto").toLowerCase();
  if (transport !== "auto" && transport !== "shm" && transport !== "tcp") {
    throw new Error(`RINGTORCH_TRANSPORT must be auto, shm or tcp, got ${JSON.stringify(env.RINGTORCH_TRANSPORT)}`);
  }
  const debug = (env.RINGTORCH_DISTRIBUTED_DEBUG ?? env.TORCH_DISTRIBUTED_DEBUG ?? "OFF").toUpperCase();
  const slots = intIn(env, "RINGTORCH_SHM_SLOTS", 8, 2, 64);
  return {
    transport,
    algorithm: parseAlgorithm(env.RINGTORCH_ALGO, "RINGTORCH_ALGO"),
    debugDetail: debug === "DETAIL",
    timeoutMs: env.RINGTORCH_TIMEOUT_MS ? intIn(env, "RINGTORCH_TIMEOUT_MS", 0, 1, 2 ** 31 - 1) : undefined,
    socketAddr: env.RINGTORCH_SOCKET_ADDR || undefined,
    tcpStreams: intIn(env, "RINGTORCH_TCP_STREAMS", 1, 1, MAX_TCP_STREAMS),
    stripeBytes: intIn(env, "RINGTORCH_TCP_STRIPE_KB", 1024, 0, 2 ** 30) * 1024,
    // setsockopt takes an int, and the kernel doubles what it is given.
    tcpBufferBytes: intIn(env, "RINGTORCH_TCP_BUFFER_KB", 0, 0, 1 << 20) * 1024,
    // 64 bytes over a power of two, so that a power-of-two message and its 16-byte header fill
    // whole slots (512 KiB takes 2 slots, not 3).
    slotBytes: intIn(env, "RINGTORCH_SHM_SLOT_KB", 256, 4, 16384) * 1024 + 64,
    slots,
    spinUs: intIn(env, "RINGTORCH_SPIN_US", 50, 0, 1_000_000),
    streamingBytes: intIn(env, "RINGTORCH_STREAMING_KB", 8192, 0, 2 ** 40) * 1024,
    pipelineBytes: intIn(env, "RINGTORCH_PIPELINE_KB", 512, 4, 1 << 20) * 1024,
  };
}

export function intIn(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return v;
}
