/**
 * Run tracking for distributed training, offline: W&B-style runs (one per rank, grouped by
 * experiment, resumable through checkpoints), JSONL and TensorBoard event files from one `log`
 * call, system metrics, tqdm-style progress bars, and an HTML report (`npx ringtorch report <dir>`).
 *
 * Layout of an experiment folder: `<dir>/rank-<r>/{run.json, metrics.jsonl, system.jsonl,
 * summary.json, events.out.tfevents.*}`.
 *
 * Timeline: `<trace dir>/rank-<r>.json` per rank and, under ringrun, `<trace dir>/trace.json`
 * merged (Trace Event Format, for ui.perfetto.dev).
 */
export { init, currentRun, type InitOptions } from "./init.js";
export { Run, type LogOptions, type DefineMetricOptions } from "./run.js";
export type { SummaryKind, MetricDefinition } from "./metric_defs.js";
export type { RunInfo, MetricValue } from "./sink.js";
export type { SystemMetricsOptions } from "./system_metrics.js";
export { readJsonl } from "./jsonl.js";
export { progress, Progress, writeAbove as write, type ProgressOptions } from "./progress.js";
export { startTrace, stopTrace, traceInfo, type TraceInfo } from "./trace/tracing.js";
export { mergeTraces, readTraceEvents, type MergedTrace } from "./trace/merge.js";
import { startTraceFromEnv } from "./trace/tracing.js";

// RINGTORCH_TRACE (set by `ringrun --trace <dir>`) traces from the moment ringtorch is loaded.
startTraceFromEnv();
