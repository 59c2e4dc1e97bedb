import { empty } from "../../ops/creation.js";
import type { DType } from "../../tensor/dtype.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { CommWork } from "../comm.js";
import type { FsdpComm } from "./comm.js";

/**
 * Communication buffers shared by every unit over one comm, each as large as the largest unit
 * needs: the gathered parameters (copied out at once) and the gradients laid out for the
 * reduce-scatter. Reusing them keeps FSDP's memory at the ZeRO formula plus one unit, and keeps
 * the comm worker from holding a fresh buffer of every step until its own collector runs.
 */
export class Scratch {
  private readonly buffers = new Map<string, Tensor>();
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
