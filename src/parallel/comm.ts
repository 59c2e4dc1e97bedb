import type { Tensor } from "../tensor/tensor.js";

/** A collective in flight; wait() blocks until it is done (or throws the collective's error). */
export interface CommWork {
  wait(): void;
}

/**
 * What DDP needs from a process group. Keeping it this small lets DDP run over any group
 * (`processGroup` option) and lets tests substitute an instrumented one.
 */
export interface DdpComm {
  readonly rank: number;
  readonly worldSize: number;
  /**
   * Starts one in-place all-reduce over `tensors` (a coalesced collective) that leaves in every
   * element the sum over ranks divided by `divisor`, progressing without the main thread.
   */
  allReduceAverageAsync(tensors: readonly Tensor[], divisor: number): CommWork;
  /** The same reduction, done before returning (on the calling thread where the group allows). */
  allReduceAverage(tensors: readonly Tensor[], divisor: number): void;
  /** In-place broadcast from `src`, blocking. */
  broadcast(buffer: Tensor, src: number): void;
  /** Every rank's integer, in rank order, blocking. */
  allGatherInts(value: number): number[];
}
