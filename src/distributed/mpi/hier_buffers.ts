import { DTYPE_BYTES, type CommDType, type TypedArray } from "../dtypes.js";

/** What one hierarchical all-reduce works in besides the user's buffers. */
export interface HierScratch {
  /** The padded copy that several buffers or 16-bit floats are reduced in; null when reduced in place. */
  staging: TypedArray | null;
  /** This rank's shard: the reduce-scatter's output, MPI's all-reduce buffer, the all-gather's input. */
  shard: TypedArray;
  /** The shared-memory gate that chains the three steps (engine/gate.ts). */
  gate: Int32Array;
}

type Ctor = new (b: SharedArrayBuffer) => TypedArray;

/**
 * Scratch buffers kept per size and reused, as the pipeline's message buffers are: a buffer
 * handed to the transport's and MPI's threads is freed only once each has collected its handle,
 * which the transport's thread does only after tens of megabytes of buffers new to it
 * (engine/seen_buffers.ts). DDP all-reduces the same bucket sizes every step, so fresh scratch per
 * call would keep steps' worth of it alive and make those threads collect; reused, they see the
 * same few buffers. Kept: as many per size as were in flight at once.
 */
export class HierScratchPool {
  private readonly free = new Map<string, HierScratch[]>();

  take(ctor: Ctor, dtype: CommDType, stagingNumel: number, chunk: number): HierScratch {
    const reused = this.free.get(keyOf(ctor, stagingNumel, chunk))?.pop();
    if (reused) return reused;
    const alloc = (n: number) => new ctor(new SharedArrayBuffer(n * DTYPE_BYTES[dtype]));
    return { staging: stagingNumel > 0 ? alloc(stagingNumel) : null, shard: alloc(chunk), gate: new Int32Array(new SharedArrayBuffer(8)) };
  }

  /** Only once every step that used it has finished: a failed all-reduce's scratch is dropped instead. */
  give(s: HierScratch): void {
    s.gate.fill(0);
    const key = keyOf(s.shard.constructor as Ctor, s.staging?.length ?? 0, s.shard.length);
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(s);
  }
}

const keyOf = (ctor: Ctor, stagingNumel: number, chunk: number) => `${ctor.name}:${stagingNumel}:${chunk}`;
