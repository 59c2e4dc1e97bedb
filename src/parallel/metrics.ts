import { allReduce, barrier } from "../distributed/collectives.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import { getRank, getWorldSize, isInitialized } from "../distributed/init.js";
import { tensor } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkArity } from "../util/options.js";

const groupOpts = (group?: ProcessGroup) => (group ? { group } : {});
const distributed = (group?: ProcessGroup) => (group ? group.worldSize > 1 : isInitialized() && getWorldSize() > 1);

/** Sums numbers over all ranks in float64 (one small all-reduce); one process returns them as they are. */
export function allReduceSum(values: readonly number[], group?: ProcessGroup): number[] {
  if (!distributed(group)) return [...values];
  const t = tensor(new Float64Array(values));
  allReduce(t, groupOpts(group));
  return Array.from(t.data());
}

/**
 * The mean of a per-rank value (a loss) over all ranks, for logging: every rank gets the same
 * number. Weighted by `count` when ranks saw different numbers of samples.
 */
export function allReduceMean(value: number | Tensor, count = 1, group?: ProcessGroup): number {
  const v = typeof value === "number" ? value : value.item();
  const [sum, n] = allReduceSum([v * count, count], group);
  return sum / n;
}

/**
 * Accuracy over the whole evaluation set from each rank's counts. With a DistributedSampler in
 * evaluation mode every sample is counted exactly once, so this equals the one-process accuracy
 * (a padding sampler would count some samples twice).
 */
export function globalAccuracy(correct: number, total: number, group?: ProcessGroup): { correct: number; total: number; accuracy: number } {
  const [c, t] = allReduceSum([correct, total], group);
  return { correct: c, total: t, accuracy: t > 0 ? c / t : 0 };
}

/**
 * Runs fn on rank 0 first and on the other ranks after it finished (the "download and preprocess
 * once" pattern), with two barriers as PyTorch's main_process_first contexts have: the first lets
 * the others start once rank 0's files are in place, the second returns on every rank (rank 0
 * included) only when every rank has finished fn, so no rank moves on, or deletes a shared file,
 * while another still reads it.
 */
export async function rank0First<T>(fn: () => T | Promise<T>, group?: ProcessGroup): Promise<T> {
  checkArity("rank0First", arguments, 2, "await parallel.rank0First(() => …, group)");
  if (!distributed(group)) return fn();
  const rank = group ? group.rank : getRank();
  let result: T | undefined;
  if (rank === 0) result = await fn();
  barrier(groupOpts(group));
  if (rank !== 0) result = await fn();
  barrier(groupOpts(group));
  return result as T;
}
