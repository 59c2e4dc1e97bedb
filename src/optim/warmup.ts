import { checkArity, checkOptions } from "../util/options.js";
import { LambdaLR } from "./schedulers.js";
import type { AnyOptimizer } from "./lr_scheduler.js";

/**
 * Linear warmup from 0 to the initial lr over warmupSteps, then a cosine decay to 0 at
 * trainingSteps (numCycles = 0.5 is a half cosine). The schedule of Hugging Face's
 * get_cosine_schedule_with_warmup, as a LambdaLR; step it once per optimizer step.
 */
export function getCosineScheduleWithWarmup(
  optimizer: AnyOptimizer,
  warmupSteps: number,
  trainingSteps: number,
  options: { numCycles?: number; lastEpoch?: number } = {},
): LambdaLR {
  checkArity("getCosineScheduleWithWarmup", arguments, 4, "getCosineScheduleWithWarmup(optimizer, warmupSteps, trainingSteps, { numCycles, lastEpoch })");
  checkOptions("getCosineScheduleWithWarmup", options, ["numCycles", "lastEpoch"]);
  checkSteps("getCosineScheduleWithWarmup", warmupSteps, trainingSteps);
  const cycles = options.numCycles ?? 0.5;
  return new LambdaLR(
    optimizer,
    (step) => {
      if (step < warmupSteps) return step / Math.max(1, warmupSteps);
      const progress = (step - warmupSteps) / Math.max(1, trainingSteps - warmupSteps);
      return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * cycles * 2 * progress)));
    },
    { lastEpoch: options.lastEpoch },
  );
}

/** Linear warmup to the initial lr, then a linear decay to 0 at trainingSteps (get_linear_schedule_with_warmup). */
export function getLinearScheduleWithWarmup(optimizer: AnyOptimizer, warmupSteps: number, trainingSteps: number, options: { lastEpoch?: number } = {}): LambdaLR {
  checkArity("getLinearScheduleWithWarmup", arguments, 4, "getLinearScheduleWithWarmup(optimizer, warmupSteps, trainingSteps, { lastEpoch })");
  checkOptions("getLinearScheduleWithWarmup", options, ["lastEpoch"]);
  checkSteps("getLinearScheduleWithWarmup", warmupSteps, trainingSteps);
  return new LambdaLR(
    optimizer,
    (step) => {
      if (step < warmupSteps) return step / Math.max(1, warmupSteps);
      return Math.max(0, (trainingSteps - step) / Math.max(1, trainingSteps - warmupSteps));
    },
    { lastEpoch: options.lastEpoch },
  );
}

function checkSteps(where: string, warmupSteps: number, trainingSteps: number): void {
  if (!Number.isInteger(warmupSteps) || warmupSteps < 0 || !Number.isInteger(trainingSteps) || trainingSteps < warmupSteps) {
    throw new RangeError(`${where}: expected integers 0 <= warmupSteps <= trainingSteps, got ${warmupSteps} and ${trainingSteps}`);
  }
}
