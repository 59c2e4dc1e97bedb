import type { Worker } from "node:worker_threads";
import { join } from "node:path";
import { checkOptions } from "../util/options.js";
import { siblingModule, spawnWorker } from "../util/spawn_worker.js";
import { commStats } from "../distributed/comm_stats.js";
import { JsonlWriter } from "./jsonl.js";
import type { Run } from "./run.js";
import { SampleState } from "./system_sample.js";

export const SYSTEM_FILE = "system.jsonl";

export interface SystemMetricsOptions {
  /** Milliseconds between samples (default 2000). */
  intervalMs?: number;
  /** Samples each log step covers on this rank (the batch size), to report samples/s. */
  samplesPerStep?: number;
}


/**
 * Samples this process from a worker thread, so that a training loop that never yields to the
 * event loop (a synchronous epoch) is still measured: step time and samples/s from the steps the
 * run logs, the share of step time spent waiting on collectives, resident memory, and CPU use
 * (all threads, 100% = one core). Each sample is a line of
 * `<run dir>/system.jsonl`. The worker does not keep the process alive.
 */
export function startSystemMetrics(run: Run, dir: string, options: SystemMetricsOptions): Worker {
  checkOptions("track.init systemMetrics", options, ["intervalMs", "samplesPerStep"]);
  const intervalMs = options.intervalMs ?? 2000;
  if (!(intervalMs >= 10)) throw new RangeError(`track.init: systemMetrics.intervalMs must be at least 10, got ${intervalMs}`);
  const samplesPerStep = options.samplesPerStep ?? null;
  if (samplesPerStep !== null && !(samplesPerStep > 0)) throw new RangeError(`track.init: systemMetrics.samplesPerStep must be positive, got ${samplesPerStep}`);
  const state = new SampleState();
  state.init(run.step, commStats.waitMs);
  const path = join(dir, SYSTEM_FILE);
  run.onStep((step, wallMs) => {
    state.f[0] = step;
    state.f[1] = wallMs;
    state.f[2]++;
    state.f[7] = commStats.waitMs;
  });
  const worker = spawnWorker(siblingModule(import.meta.url, "./system_worker"), { workerData: { path, intervalMs, samplesPerStep, shared: state.buffer } });
  worker.unref();
  worker.on("error", (err) => console.warn(`ringtorch track: system metrics stopped: ${err.message}`));
  // A last sample at finish, so that a run shorter than the worker's start-up still has one.
  run.onFinish(() => {
    void worker.terminate();
    const writer = new JsonlWriter(path);
    state.sample(writer, samplesPerStep);
    writer.close();
  });
  return worker;
}
