import { rmSync } from "node:fs";
import { listCheckpoints } from "../checkpoint/directory.js";
import { metricValue, type TrainerState } from "./callbacks.js";
import type { TrainingArguments } from "./training_arguments.js";

/** Records `path` as the best checkpoint when the last evaluation beat the best metric so far. */
export function updateBest(state: TrainerState, args: TrainingArguments, lastEval: Record<string, number> | null, path: string): void {
  if (!args.metricForBestModel || !lastEval) return;
  const value = metricValue(lastEval, args.metricForBestModel);
  const best = state.bestMetric;
  if (best === null || (args.greaterIsBetter ? value > best : value < best)) {
    state.bestMetric = value;
    state.bestModelCheckpoint = path;
  }
}

/** Deletes all but the newest `limit` checkpoints under outputDir, never the best one (it is kept besides, as in HF). */
export function rotateCheckpoints(outputDir: string, limit: number, best: string | null): void {
  const others = listCheckpoints(outputDir).filter((c) => c.path !== best);
  // The best counts towards the limit, but the newest checkpoint is always kept to resume from.
  const keepOthers = best ? Math.max(1, limit - 1) : limit;
  for (const { path } of others.slice(keepOthers)) rmSync(path, { recursive: true, force: true });
}
