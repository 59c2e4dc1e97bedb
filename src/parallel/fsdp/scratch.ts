import { empty } from "../../ops/creation.js";
import type { DType } from "../../tensor/dtype.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { CommWork } from "../comm.js";
import type { FsdpComm } from "./comm.js";

/**
 * Communication buffers shared by every unit over one comm: the gradients laid out for the
 * reduce-scatter and the all-gather's output, each as large as the largest unit needs (a second
 * gather buffer only while two gathers are in flight, which the prefetch schedule avoids).
 * Reusing them keeps FSDP's memory at the ZeRO formula plus two units, and keeps the comm worker
 * from holding a fresh buffer of every step until its own collector runs.
 */
export class Scratch {
  private readonly buffers = new Map<string, Tensor>();
  /** Gather buffers by dtype; `busy` while a gather writes one or its output is not yet copied out. */
  private readonly gathers = new Map<DType, { buffer: Tensor; busy: boolean }[]>();
  /** The reduction that last read the send buffers; waited for before they are reused. */
  inFlight: CommWork | null = null;

  /** n elements of the role's buffer (zeroed when asked), grown when too small. */
  get(role: string, dtype: DType, n: number, zero: boolean): Tensor {
    const key = `${role}:${dtype}`;
    let t = this.buffers.get(key);
    if (!t || t.numel < n) this.buffers.set(key, (t = empty([n], { dtype })));
    if (zero) t.storage.data.fill(0, 0, n);
    return t.narrow(0, 0, n);
  }

  /**
   * A free gather buffer of n elements, marked busy until `releaseGather`. The smallest free one
   * that fits is taken, so that a small unit's prefetch does not occupy (or grow) the buffer the
   * largest unit needs.
   */
  acquireGather(dtype: DType, n: number): Tensor {
    let list = this.gathers.get(dtype);
    if (!list) this.gathers.set(dtype, (list = []));
    const free = list.filter((g) => !g.busy);
    let slot = free.filter((g) => g.buffer.numel >= n).sort((a, b) => a.buffer.numel - b.buffer.numel)[0];
    if (!slot) {
      slot = free.sort((a, b) => b.buffer.numel - a.buffer.numel)[0];
      if (slot) slot.buffer = empty([n], { dtype });
      else list.push((slot = { buffer: empty([n], { dtype }), busy: false }));
    }
    slot.busy = true;
    return slot.buffer.narrow(0, 0, n);
  }

  releaseGather(t: Tensor): void {
    for (const list of this.gathers.values()) for (const g of list) if (g.buffer.storage === t.storage) g.busy = false;
  }

  /** Bytes of every buffer held (for memoryStats). */
  bytes(): number {
    let n = 0;
    for (const t of this.buffers.values()) n += t.storage.data.byteLength;
    for (const list of this.gathers.values()) for (const g of list) n += g.buffer.storage.data.byteLength;
    return n;
  }

  /** Waits for the reduction still reading the send buffers. */
  settle(): void {
    const w = this.inFlight;
    this.inFlight = null;
    w?.wait();
  }
}

const scratches = new WeakMap<FsdpComm, Scratch>();

export function scratchFor(comm: FsdpComm): Scratch {
  let s = scratches.get(comm);
  if (!s) scratches.set(comm, (s = new Scratch()));
  return s;
}
