import type { DType, TypedArray } from "./dtype.js";
import { arrayTypeOf, itemSize } from "./dtype.js";

/**
 * Tensor memory. Every storage lives in a SharedArrayBuffer so that the communication worker
 * thread can reduce into it in place and native kernels can read it without a copy.
 *
 * Buffers are recycled through a pool keyed by byte length: a training loop allocates the same
 * sizes every step, and a fresh multi-megabyte buffer costs page faults and zeroing each time.
 * A buffer goes back to the pool only through `release()`, called where the caller knows nothing
 * else holds it (autograd does this for gradients it consumed); everything else is freed by the
 * garbage collector. (A FinalizationRegistry cannot feed the pool: it holds its values strongly
 * until its callback runs, and the callback never runs inside a synchronous training loop, so
 * every buffer would be kept.) A storage whose array was handed to user code (`expose()`) is
 * never recycled, since the user's array may outlive the Storage object.
 */
export class Storage {
  readonly dtype: DType;
  readonly data: TypedArray;
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

  /** Returns the buffer to the pool now. Only for storages that no tensor will touch again. */
  release(): void {
    if (this.exposed || this.released) return;
    this.released = true;
    pool.put(this.data.buffer as SharedArrayBuffer);
  }
}

const POOL_LIMIT_BYTES = Number(process.env.RINGTORCH_POOL_MB ?? 512) * 1024 * 1024;
const MIN_POOLED_BYTES = 4096;

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

/**
 * V8 does not count SharedArrayBuffer memory as external memory, so on its own it never runs a
 * full collection for it: tensors whose handles reached the old generation keep their memory until
 * the JS heap itself grows, which in a training loop may be never (3 GB of dead tensors were seen
 * in bench/workers/ddp_mlp.ts). Fresh allocations are reported to V8 (by the native backend, which
 * installs the reporter), batched to one native call per REPORT_BYTES. Only a share of each byte is
 * reported: V8 starts a full collection every 64 MB of reported growth, and collecting every 64 MB
 * of fresh tensors cost an MLP 18% of its speed. At 1/8 it collects about every 512 MB: 6,000 DDP
 * steps of bench/workers/ddp_mlp.ts level off at 667 MB of RSS (1.1 GB at 1/16, unbounded without
 * reporting), at a cost within this machine's noise (a few percent at most).
 */
const REPORT_BYTES = 1 << 20;
const REPORTED_SHARE = 1 / 8;
let reportFresh: ((bytes: number) => void) | null = null;
let unreported = 0;

export function setFreshMemoryReporter(report: ((bytes: number) => void) | null): void {
  reportFresh = report;
}

function noteFresh(bytes: number): void {
  unreported += bytes;
  if (unreported < REPORT_BYTES || !reportFresh) return;
  reportFresh(Math.round(unreported * REPORTED_SHARE));
  unreported = 0;
}

/** Allocates storage for n elements; zeroed unless `zero` is false (then contents are arbitrary). */
export function allocate(dtype: DType, n: number, zero = true): Storage {
  // A NaN or fractional size from a bad shape would reach V8's external-memory accounting and abort the process.
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`allocate: a tensor needs a non-negative integer number of elements, got ${n} (${dtype})`);
  const Ctor = arrayTypeOf(dtype);
  const byteLength = n * itemSize(dtype);
  const recycled = byteLength >= MIN_POOLED_BYTES ? pool.take(byteLength) : undefined;
  if (!recycled) noteFresh(byteLength);
  const data = new Ctor(recycled ?? new SharedArrayBuffer(byteLength), 0, n);
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

export const memoryPool = {
  get pooledBytes(): number {
    return pool.pooledBytes;
  },
  clear(): void {
    pool.clear();
  },
};
