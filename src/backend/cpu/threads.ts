import { availableParallelism } from "node:os";
import { schedulerLocalSize } from "../../util/scheduler_env.js";

/**
 * How many threads the cpu backend's pool starts with: RINGTORCH_NUM_THREADS if set; else 1 when
 * a launcher (ringrun, torchrun) started several processes on this host (LOCAL_WORLD_SIZE > 1), so
 * that they don't oversubscribe the cores between them, or when srun or mpirun did (their own
 * variables: scheduler_env.ts); else every available core.
 */
export function defaultNumThreads(env: NodeJS.ProcessEnv = process.env): number {
  const explicit = env.RINGTORCH_NUM_THREADS;
  if (explicit !== undefined && explicit.trim() !== "") return parseThreadCount(explicit, "RINGTORCH_NUM_THREADS");
  const local = Number(env.LOCAL_WORLD_SIZE);
  if (Number.isInteger(local) && local > 1) return 1;
  if (env.LOCAL_WORLD_SIZE === undefined && (schedulerLocalSize(env) ?? 1) > 1) return 1;
  return availableParallelism();
}

export function parseThreadCount(value: string | number, where: string): number {
  const n = typeof value === "number" ? value : Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new RangeError(`${where} must be a whole number of threads from 1 to 256, got ${JSON.stringify(value)}.`);
  }
  return n;
}
