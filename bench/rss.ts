/**
 * Peak resident memory per rank, printed the same way by ringtorch's bench workers and by the
 * PyTorch peers (bench/torch/common.py's print_peak_rss): one `peak_rss rank=R mb=X` line per
 * process, read back by parseRankRss. Each rank reports its own process, never a launcher's.
 */

import { getHeapSpaceStatistics } from "node:v8";
import { userSemiSpaceFlag } from "../src/launch/young_generation.js";

/**
 * This process's young generation as V8 reports it now (both semi-spaces), and the flag that capped
 * it: peak RSS moves with it by tens of MB (README, Tensor memory: the young generation's size).
 */
export function describeNewSpace(): string {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  const flag = userSemiSpaceFlag(process.execArgv, process.env);
  return `V8 new space ${space ? (space.space_size / 2 ** 20).toFixed(0) : "?"} MiB (${flag ?? "V8's default semi-space"})`;
}

/** Prints this process's peak RSS (the kernel's high-water mark, ru_maxrss) as one line. */
export function printPeakRss(rank = Number(process.env.RANK ?? 0)): void {
  process.stdout.write(`peak_rss rank=${rank} mb=${(process.resourceUsage().maxRSS / 1024).toFixed(1)}\n`);
}

/** The per-rank peak RSS figures in a run's output, in MB, indexed by rank (empty if none were printed). */
export function parseRankRss(output: string): number[] {
  const out: number[] = [];
  for (const m of output.matchAll(/peak_rss rank=(\d+) mb=(\d+(?:\.\d+)?)/g)) out[Number(m[1])] = Number(m[2]);
  return out;
}
