import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TypedArray } from "./dtypes.js";

/** The communication half of the native addon (native/comm/register.cc). */
export interface CommNative {
  /** stripeBytes: TCP messages this large are cut across all of a peer's streams. */
  create(rank: number, world: number, slotBytes: number, slots: number, spinUs: number, streamingBytes: number, stripeBytes: number): number;
  createSegment(handle: number, name: string): void;
  attachShmPeer(handle: number, peer: number, name: string, pid: number): void;
  /** Hands the connection `fd` to the communicator as TCP stream `stream` (0..7) to `peer`. */
  attachTcpPeer(handle: number, peer: number, fd: number, stream: number): void;
  /** The address of a typed array's first element (see AddressRef). */
  addressOf(data: TypedArray): number;
  /**
   * `segments`: (buffer index, byte offset, bytes) triples of scattered messages (link.ts); a
   * buffer index of -1 makes the offset an address. `desc` holds DESC_FIELDS numbers per transfer (link.ts).
   * With `wakeSeen` (a value of posted()) the run also returns Stalled once the main thread has
   * posted since (notifyPosted) or a transfer of the batch finished while others remain.
   */
  run(handle: number, desc: Float64Array, count: number, bufs: TypedArray[], timeoutMs: number, stallMs: number, segments?: Float64Array, wakeSeen?: number): number;
  /** Main thread, after posting an operation to the comm worker: counts it and wakes a waiting batch (see run's wakeSeen). */
  notifyPosted(handle: number): void;
  /** How many operations notifyPosted has counted. */
  posted(handle: number): number;
  /** The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID; -1 where it fails): exact at any moment, unlike schedstat's tick-updated figure. */
  threadCpuNs(): number;
  lastError(handle: number): string;
  abort(handle: number): void;
  destroy(handle: number): void;
  markFailed(handle: number): void;
  shmUnlink(name: string): boolean;
  tcpListen(host: string, port: number): [fd: number, port: number];
  /** bufferBytes: SO_SNDBUF/SO_RCVBUF of the new socket; 0 leaves them to the kernel's autotuning. */
  tcpAccept(fd: number, timeoutMs: number, bufferBytes: number): number | string;
  tcpConnect(host: string, port: number, timeoutMs: number, bufferBytes: number): number | string;
  sockTransfer(fd: number, data: Uint8Array, writing: boolean, timeoutMs: number): string;
  /** Marks in `ready` which of `fds` can be read (or hung up); returns how many, or an error. */
  sockPoll(fds: Int32Array, ready: Uint8Array, timeoutMs: number): number | string;
  /** Reads what has arrived into data[byteOffset..] without waiting: bytes read, 0 if none, -1 if closed. */
  sockReadSome(fd: number, data: Uint8Array, byteOffset: number): number;
  closeFd(fd: number): void;
  reduceInto(dtype: number, op: number, dst: TypedArray, dstByteOff: number, a: TypedArray, aByteOff: number, b: TypedArray, bByteOff: number, count: number): void;
  bf16ToF32(src: Uint16Array, srcIndex: number, dst: Float32Array, dstIndex: number, count: number): void;
  f32ToBf16(src: Float32Array, srcIndex: number, dst: Uint16Array, dstIndex: number, count: number): void;
  f16ToF32(src: Uint16Array, srcIndex: number, dst: Float32Array, dstIndex: number, count: number): void;
  /** IEEE half precision, rounding to nearest even; past ±65504 becomes ±Infinity. */
  f32ToF16(src: Float32Array, srcIndex: number, dst: Uint16Array, dstIndex: number, count: number): void;
  divideBy(dtype: number, buf: TypedArray, byteOffset: number, count: number, divisor: number): void;
}

export const enum TransferStatus {
  Ok = 0,
  Timeout = 1,
  PeerDied = 2,
  PeerClosed = 3,
  Mismatch = 4,
  IoError = 5,
  Aborted = 6,
  Stalled = 7,
}

let cached: CommNative | null | undefined;

/** The layout of run()'s descriptors this code writes; an addon built from older sources reads them wrong. */
const COMM_VERSION = 7;

/** Most TCP connections per pair of ranks (kMaxStreams in native/comm/comm.h). */
export const MAX_TCP_STREAMS = 8;

function addonPath(): string {
  // src/distributed/native.ts and dist/distributed/native.js both sit two levels below the root.
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  return join(root, "build", "Release", "ringtorch.node");
}

/** The addon's comm functions, or null when the addon has not been built. */
export function tryLoadCommNative(): CommNative | null {
  if (cached !== undefined) return cached;
  const path = addonPath();
  if (!existsSync(path)) return (cached = null);
  const addon = createRequire(import.meta.url)(path) as { comm?: CommNative; commVersion?: number };
  if (addon.comm && addon.commVersion !== COMM_VERSION) {
    throw new Error(
      `the native addon (${path}) was built from other sources (comm version ${addon.commVersion ?? "unknown"}, expected ` +
        `${COMM_VERSION}); run \`npm run build:native\` to rebuild it`,
    );
  }
  return (cached = addon.comm ?? null);
}

export function loadCommNative(): CommNative {
  const native = tryLoadCommNative();
  if (!native) {
    throw new Error(
      `ringtorch.distributed needs the native addon (${addonPath()}) for its transports, and it is missing ` +
        "or was built without them. Run `npm run build:native` and look for compiler errors.",
    );
  }
  return native;
}
