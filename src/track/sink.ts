import type { MetricDefinition } from "./metric_defs.js";

/** What a run records about itself in run.json, and what the writers are told at the start. */
export interface RunInfo {
  id: string;
  /** The id given to track.init, the same on every rank; checkpoints carry it. */
  experimentId: string;
  name: string;
  group: string;
  project: string;
  rank: number;
  localRank: number;
  worldSize: number;
  mode: "rank0" | "all";
  host: string;
  pid: number;
  config: Record<string, unknown>;
  startedAt: string;
  /** One entry per time the run was resumed (a restart by ringrun, a new job from a checkpoint). */
  resumes: { at: string; fromStep: number; pid: number }[];
  finishedAt: string | null;
  defines: MetricDefinition[];
}

export type MetricValue = number | string;

/** One more writer of the same log calls (TensorBoard event files). The JSONL file is the canonical record. */
export interface RunSink {
  /** Before the first values of a new run (not again on a resume). */
  start(info: RunInfo): void;
  /** `steps` maps each metric to the step it is plotted against (its stepMetric's value, else the run's step). */
  log(step: number, wallTime: number, metrics: ReadonlyMap<string, MetricValue>, steps: ReadonlyMap<string, number>): void;
  /** Drops whatever was written at or after `wallTime` (a rewind to a checkpoint). */
  rewind(wallTime: number): void;
  finish(info: RunInfo, summary: Record<string, unknown>): void;
}
