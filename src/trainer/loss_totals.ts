import { allReduceSum } from "../parallel/metrics.js";

/**
 * The training losses a rank has not logged yet and its running total. Each rank has its own (the
 * logged values are their mean over ranks), so a checkpoint keeps every rank's, and a resumed run
 * logs the same means, and the same train_loss, as one never interrupted.
 */
export interface LossTotals {
  sinceLog: number;
  stepsSinceLog: number;
  total: number;
  steps: number;
}

const FIELDS = ["sinceLog", "stepsSinceLog", "total", "steps"] as const;

export function freshTotals(): LossTotals {
  return { sinceLog: 0, stepsSinceLog: 0, total: 0, steps: 0 };
}

/** Every rank's totals, on every rank (one all-reduce of a vector that is zero outside each rank's slot). */
export function everyRanksTotals(mine: LossTotals, rank: number, worldSize: number): LossTotals[] {
  const slots = new Array<number>(worldSize * FIELDS.length).fill(0);
  FIELDS.forEach((f, i) => (slots[rank * FIELDS.length + i] = mine[f]));
  const all = allReduceSum(slots);
  return Array.from({ length: worldSize }, (_, r) => Object.fromEntries(FIELDS.map((f, i) => [f, all[r * FIELDS.length + i]])) as unknown as LossTotals);
}

/**
 * This rank's totals from a checkpoint's list. Saved on another number of ranks, the ranks'
 * samples were split otherwise: each rank continues from the mean of the saved ones (the logged
 * means stay right, to rounding).
 */
export function restoredTotals(saved: unknown, rank: number, worldSize: number): LossTotals {
  if (!Array.isArray(saved) || saved.length === 0) return freshTotals();
  const list = saved as LossTotals[];
  if (list.length === worldSize) return { ...list[rank] };
  const mean = freshTotals();
  for (const f of FIELDS) mean[f] = list.reduce((s, t) => s + t[f], 0) / list.length;
  mean.stepsSinceLog = list[0].stepsSinceLog;
  mean.steps = list[0].steps;
  return mean;
}
