import type { DType, TypedArray } from "./dtype.js";
import { Arena, type ArenaPolicy, type ArenaStats, exposeCollector, type NativeArena } from "./arena.js";
import { arrayTypeOf, itemSize } from "./dtype.js";

/**
 * Tensor memory. Every storage lives in a SharedArrayBuffer so that the communication worker
 * thread can reduce into it in place and native kernels can read it without a copy.
 *
 * With the cpu backend, buffers come from the native arena (arena.ts, native/pool/arena.cc): a
 * buffer goes back to a size-class free list by itself when the garbage collector finds its last
 * handle dead, in whichever thread held it last, and the arena asks for a young-generation
 * collection when a size class runs dry, so that a synchronous loop that drops its tensors reuses
 * their memory without any explicit release. (A FinalizationRegistry could not: its callbacks never
 * run inside a synchronous loop.) `release()` still hands a buffer back at once where the caller
 * knows nothing else holds it (autograd does this for gradients it consumed), through a small pool
 * of buffers keyed by byte length. A storage whose array was handed to user code (`expose()`) is
 * never released that way, since the user's array may outlive the Storage object; the arena still
 * recycles it once the user's array is dead too.
 */
/**
 * Set by autograd's inferenceMode while it runs: storage allocated then belongs to inference
 * tensors (PyTorch's rule: views of normal tensors stay normal, new memory is marked).
 */
export const inferenceState = { active: false };

export class Storage {
  readonly dtype: DType;
  readonly data: TypedArray;
  /** Allocated inside inferenceMode: its tensors cannot be saved for backward or updated in place outside it. */
  readonly inference = inferenceState.active;
  /** Bumped by every in-place op, so autograd can tell a saved tensor was modified after saving. */
  version = 0;
  private exposed = false;
  private released = false;

  constructor(dtype: DType, data: TypedArray) {
    this.dtype = dtype;
    this.data = data;
  }

  get length(): number {
    return this.data.length;
  }

  /** Marks the array as escaped to user code: it will never be reused by the pool. */
  expose(): TypedArray {
    this.exposed = true;
    return this.data;
  }

  /**
   * Puts other memory under this storage, keeping the object that every view and every tensor
   * autograd saved refers to (torch's `storage.resize_`). FSDP frees an unsharded parameter's
   * memory between uses (an empty array) and gathers into fresh memory before the next use.
   * The version is kept: refilling with the same values is not a modification.
   */
  swapData(data: TypedArray): void {
    if (data.constructor !== this.data.constructor) throw new TypeError(`Storage.swapData: expected a ${this.data.constructor.name} for ${this.dtype} memory, got a ${data.constructor.name}`);
    (this as { data: TypedArray }).data = data;
    this.exposed = false;
    this.released = false;
  }

  /** Returns the buffer to the pool now. Only for storages that no tensor will touch again. */
  release(): void {
    if (this.exposed || this.released) return;
    this.released = true;
    pool.put(this.data.buffer as SharedArrayBuffer);
  }
}

const POOL_LIMIT_BYTES = Number(process.env.RINGTORCH_RELEASED_POOL_MB ?? 64) * 1024 * 1024;
const MIN_POOLED_BYTES = 4096;

/** Buffers handed back by release(), for reuse before the arena is asked. */
class BufferPool {
  private free = new Map<number, SharedArrayBuffer[]>();
  private bytes = 0;

  take(byteLength: number): SharedArrayBuffer | undefined {
    const list = this.free.get(byteLength);
    const buf = list?.pop();
    if (buf) this.bytes -= byteLength;
    return buf;
  }

  put(buf: SharedArrayBuffer): void {
    if (buf.byteLength < MIN_POOLED_BYTES || this.bytes + buf.byteLength > POOL_LIMIT_BYTES) return;
    let list = this.free.get(buf.byteLength);
    if (!list) this.free.set(buf.byteLength, (list = []));
    list.push(buf);
    this.bytes += buf.byteLength;
  }

  clear(): void {
    this.free.clear();
    this.bytes = 0;
  }

  get pooledBytes(): number {
    return this.bytes;
  }
}

const pool = new BufferPool();
let arena: Arena | null = null;

/**
 * Without the native arena (reference backend), buffers are plain SharedArrayBuffers, which V8
 * does not count as external memory, so on its own it never runs a full collection for them.
 * Fresh allocations are then reported to V8 through `reportFresh` when a backend installs one,
 * batched to one call per REPORT_BYTES, at 1/8 of their size (a full collection every ~512 MB of
 * fresh tensors; at every 64 MB collections cost an MLP 18% of its speed).
 */
const REPORT_BYTES = 1 << 20;
const REPORTED_SHARE = 1 / 8;
let reportFresh: ((bytes: number) => void) | null = null;
let unreported = 0;

export function setFreshMemoryReporter(report: ((bytes: number) => void) | null): void {
  reportFresh = report;
}

/**
 * Installs the native arena (the cpu backend does, once it has loaded the addon). Without V8's
 * collector as a function the arena could not recycle inside a synchronous loop, so it is not used.
 * RINGTORCH_ARENA=0 turns it off (plain SharedArrayBuffers), for comparison.
 */
export function installArena(native: NativeArena | null): boolean {
  if (!native || process.env.RINGTORCH_ARENA === "0") {
    arena = null;
    return false;
  }
  const collect = exposeCollector();
  arena = collect ? new Arena(native, collect) : null;
  return arena !== null;
}

function noteFresh(bytes: number): void {
  unreported += bytes;
  if (unreported < REPORT_BYTES || !reportFresh) return;
  reportFresh(Math.round(unreported * REPORTED_SHARE));
  unreported = 0;
}

function freshBuffer(byteLength: number, zero: boolean): SharedArrayBuffer {
  if (arena) return arena.alloc(byteLength, zero);
  noteFresh(byteLength);
  return new SharedArrayBuffer(byteLength);
}

/** Allocates storage for n elements; zeroed unless `zero` is false (then contents are arbitrary). */
export function allocate(dtype: DType, n: number, zero = true): Storage {
  // A NaN or fractional size from a bad shape would reach V8's external-memory accounting and abort the process.
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`allocate: a tensor needs a non-negative integer number of elements, got ${n} (${dtype})`);
  const Ctor = arrayTypeOf(dtype);
  const byteLength = n * itemSize(dtype);
  const recycled = byteLength >= MIN_POOLED_BYTES && pool.pooledBytes > 0 ? pool.take(byteLength) : undefined;
  const data = new Ctor(recycled ?? freshBuffer(byteLength, zero), 0, n);
  if (recycled && zero) data.fill(0);
  return new Storage(dtype, data);
}

/** Wraps an existing array (copied into shared memory unless it already is). */
export function storageFrom(dtype: DType, values: TypedArray): Storage {
  if (values.buffer instanceof SharedArrayBuffer && values.byteOffset === 0 && values.length * itemSize(dtype) === values.buffer.byteLength) {
    const s = new Storage(dtype, values);
    s.expose();
    return s;
  }
  const s = allocate(dtype, values.length, false);
  (s.data as unknown as { set(a: ArrayLike<number>): void }).set(values);
  return s;
}

/**
 * The tensor memory pool: `pooledBytes` released buffers waiting for reuse, and the native arena's
 * counters (null without the cpu backend). `clear()` drops the released buffers and gives the
 * arena's free blocks back to the operating system.
 */
export const memoryPool = {
  get pooledBytes(): number {
    return pool.pooledBytes;
  },
  /** The arena's counters in bytes, or null when tensors are plain SharedArrayBuffers. */
  stats(): ArenaStats | null {
    return arena?.read() ?? null;
  },
  /** Returns every block found dead now to the arena's free lists (no collection; a no-op without the arena). */
  reclaim(): void {
    arena?.reclaim();
  },
  /** The arena's collection policy (budget, fullMin and freeLimit in bytes; fullGrowth a share; this thread's scavenge cost in µs), or null without the arena. */
  policy(): ArenaPolicy | null {
    return arena ? arena.policy : null;
  },
  /** Restarts the arena's high-water marks from what it holds now. */
  resetHighWater(): void {
    arena?.resetHighWater();
  },
  clear(): void {
    pool.clear();
    arena?.trim();
  },
};
