import { availableParallelism } from "node:os";
import { getBackend } from "../backend/index.js";

/** The facts the choice rests on; each defaults to this process's. */
export interface HostShape {
  /** Cores this process may use. */
  cores?: number;
  /** Compute threads each rank runs its kernels on. */
  threads?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * DDP's `overlapReduction: "auto"` rule: whether bucket all-reduces should run on the comm thread
 * while backward goes on (true), or as one all-reduce on the training thread once backward ends.
 *
 * Overlap pays only when the comm thread gets a core that compute is not using. Between hosts it
 * always does: most of a TCP all-reduce is wire time, which costs no core. On one host the
 * reduction is memory copies and sums, CPU work through and through; when every core already runs
 * a rank's compute, the comm thread can only take a core from a rank, and adds thread switches and
 * cold caches. On 2 cores with 2 single-threaded ranks, bench/ddp.ts measured the all-reduce after
 * backward between as cheap as the overlapped one and 10 points cheaper, never dearer.
 */
export function overlapPays(shape: HostShape = {}): boolean {
  const env = shape.env ?? process.env;
  const world = Number(env.WORLD_SIZE);
  const local = Number(env.LOCAL_WORLD_SIZE);
  // Without a launcher's layout, or with ranks on several hosts, keep the overlap.
  if (!Number.isInteger(world) || !Number.isInteger(local) || local < 1 || world > local) return true;
  const cores = shape.cores ?? availableParallelism();
  const threads = shape.threads ?? computeThreads();
  return cores >= local * (threads + 1);
}

function computeThreads(): number {
  const backend = getBackend() as { getNumThreads?: () => number };
  return backend.getNumThreads?.() ?? 1;
}
