import { workerData } from "node:worker_threads";
import { JsonlWriter } from "./jsonl.js";
import { SampleState } from "./system_sample.js";

/** The system-metrics sampler thread (see system_metrics.ts). */
const { path, intervalMs, samplesPerStep, shared } = workerData as { path: string; intervalMs: number; samplesPerStep: number | null; shared: SharedArrayBuffer };
const state = new SampleState(shared);
const writer = new JsonlWriter(path);
setInterval(() => state.sample(writer, samplesPerStep), intervalMs);
