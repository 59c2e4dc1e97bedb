import type { CommDType } from "./dtypes.js";
import type { Algorithm } from "./engine/messages.js";
import { currentWorld } from "./init.js";
import type { ProcessGroup, RunOptions } from "./process_group.js";
import type { ReduceOpName } from "./reduce_op.js";
import { checkReduceOp } from "./reduce_op.js";
import { type Resolved, shapeText } from "./tensor_ref.js";
import { checkOptions } from "../util/options.js";

export interface CollectiveOptions {
  /** The group to run in; the default group (every rank) when left out. */
  group?: ProcessGroup;
  /** Return a Work at once instead of blocking until the collective is done. */
  async?: boolean;
  /** Overrides the group's timeout for this call. */
  timeoutMs?: number;
  /** Forces an algorithm (tests, tuning); RINGTORCH_ALGO does the same for every call. */
  algorithm?: Algorithm | "auto";
}

export interface ReduceOptions extends CollectiveOptions {
  /** dist.ReduceOp.SUM unless told otherwise. */
  op?: ReduceOpName;
  /**
   * allReduce of bfloat16: move and accumulate in bfloat16 itself, halving the bytes of the
   * default (which widens to float32 and rounds once at the end). Each hop rounds, so results
   * may differ in the last bit between algorithms. DDP's bf16 compression hook uses it.
   */
  lowPrecision?: boolean;
  /**
   * allReduce of a Uint16Array (or a bfloat16-stored tensor) whose bits are IEEE float16: it
   * travels and is summed as float16, rounding at each hop. DDP's fp16 compression hook uses it.
   */
  float16?: boolean;
  /**
   * With op AVG, what the sum is divided by instead of the group size (a ringtorch extension;
   * DDP under join() divides by the ranks still training). The division happens inside the
   * all-reduce's last reduction step, not as a pass of its own.
   */
  divisor?: number;
}

export type Sync<O> = O & { async?: false };
export type Async<O> = O & { async: true };

export const COLLECTIVE_KEYS = ["group", "async", "timeoutMs", "algorithm"];
export const REDUCE_KEYS = [...COLLECTIVE_KEYS, "op", "lowPrecision", "float16", "divisor"];

/**
 * The group a collective runs in, after checking its options: PyTorch passes op, group and
 * async_op positionally or as keywords, so a ported `allReduce(t, ReduceOp.SUM)` or
 * `broadcast(t, 0, group)` must say where they go instead of being ignored.
 */
export function groupOf(opts: CollectiveOptions | undefined, where: string, known: readonly string[] = COLLECTIVE_KEYS): ProcessGroup {
  if (typeof opts === "string") {
    throw new TypeError(`${where}: the reduce op goes in the options: ${where}(tensor, { op: dist.ReduceOp.${String(opts).toUpperCase()} }), got the string ${JSON.stringify(opts)} in its place`);
  }
  if (opts !== null && typeof opts === "object" && "groupRankOf" in opts) {
    throw new TypeError(`${where}: the process group goes in the options: ${where}(…, { group }), got a ProcessGroup in their place`);
  }
  checkOptions(where, opts, known);
  return opts?.group ?? currentWorld(where).world;
}

export function runOptions(opts: CollectiveOptions | undefined): RunOptions {
  return { async: opts?.async === true, timeoutMs: opts?.timeoutMs, algorithm: opts?.algorithm };
}

export function reduceOpOf(opts: ReduceOptions | undefined, dtype: CommDType, where: string): ReduceOpName {
  const op = checkReduceOp(opts?.op ?? "sum", where);
  if (dtype === "uint8") throw new Error(`${where}: cannot reduce bool/uint8 data; use int32 or a floating dtype`);
  return op;
}

export function sameDType(where: string, expected: Resolved, others: Resolved[], what: string, firstIndex = 0): void {
  others.forEach((o, i) => {
    if (o.dtype !== expected.dtype) {
      const first = firstIndex === 0 ? "the input tensor" : `${what}[0]`;
      throw new Error(`${where}: ${what}[${i + firstIndex}] has dtype ${o.dtype}, but ${first} has dtype ${expected.dtype}`);
    }
  });
}

export function divisorOf(opts: ReduceOptions | undefined, op: ReduceOpName, where: string): number | undefined {
  const d = opts?.divisor;
  if (d === undefined) return undefined;
  if (op !== "avg") throw new Error(`${where}: the divisor option goes with op dist.ReduceOp.AVG, got op ${op}`);
  if (typeof d !== "number" || !Number.isFinite(d) || d <= 0) throw new RangeError(`${where}: divisor must be a positive number, got ${String(d)}`);
  return d;
}

export function listLength(where: string, list: unknown, size: number, what: string): void {
  if (!Array.isArray(list)) throw new TypeError(`${where}: ${what} must be an array of ${size} tensors`);
  if (list.length !== size) {
    throw new Error(`${where}: ${what} must hold one tensor per rank of the group (${size}), got ${list.length}`);
  }
}

export function sameNumel(where: string, expected: number, others: Resolved[], what: string, shape: readonly number[]): void {
  others.forEach((o, i) => {
    if (o.ref.numel !== expected) {
      throw new Error(`${where}: ${what}[${i}] has shape ${shapeText(o.shape)} (${o.ref.numel} elements), but ${shapeText(shape)} (${expected}) was expected`);
    }
  });
}

export function finishersOf(resolved: Resolved[]): (() => void)[] {
  return resolved.flatMap((r) => (r.finish ? [r.finish] : []));
}
