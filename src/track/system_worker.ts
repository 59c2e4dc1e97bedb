import { workerData } from "node:worker_threads";
import { JsonlWriter } from "./jsonl.js";
import { SampleState } from "./system_sample.js";

/** The system-metrics sampler thread (see system_metrics.ts). */
const { path, intervalMs, samplesPerStep, shared } = workerData as { path: string; intervalMs: number; samplesPerStep: number | null; shared: SharedArrayBuffer };
const state = new SampleState(shared);
const writer = new JsonlWriter(path);
// A first sample as soon as the thread is up (it starts while training may already run), then every interval.
state.sample(writer, samplesPerStep);
setInterval(() => state.sample(writer, samplesPerStep), intervalMs);
