import { empty } from "../../ops/creation.js";
import type { DType } from "../../tensor/dtype.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { CommWork } from "../comm.js";
import type { FsdpComm } from "./comm.js";

/**
 * Communication buffers shared by every unit over one comm: all-gather outputs and the gradients
 * laid out for the reduce-scatter come from one set of buffers, each busy while its collective
 * runs. A gather and a reduction are in flight together during backward (the next unit's gather,
 * the last one's reduce-scatter), so two buffers serve them all; but a unit much larger than the
 * others (a root holding a language model's embedding and head) is gathered at the start of
 * forward and reduced at the end of backward, and the one large buffer serves both, beside one
 * of the others' size: with a buffer per role each would grow to the largest unit. Reusing them
 * keeps FSDP's memory at the ZeRO formula plus two units, and keeps the comm worker from holding
 * a fresh buffer of every step until its own collector runs.
 */
export class Scratch {
  private readonly buffers = new Map<string, Tensor>();
  /** Buffers by dtype; `busy` while a gather writes one (until its output is copied out) or a reduction reads one. */
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
   * A free buffer of n elements (zeroed when asked), marked busy until `release`. The smallest free
   * one that fits is taken, so that a small unit does not occupy (or grow) the buffer the largest
   * unit needs. Callers ask for a unit's gather size for its reduction too (the gather's is the
   * larger, by the sequence tags), so that one unit's two uses never make a buffer grow.
   */
  acquire(dtype: DType, n: number, zero = false): Tensor {
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
    if (zero) slot.buffer.storage.data.fill(0, 0, n);
    return slot.buffer.narrow(0, 0, n);
  }

  release(t: Tensor): void {
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
