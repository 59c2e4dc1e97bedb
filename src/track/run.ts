import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkOptions } from "../util/options.js";
import { JsonlWriter } from "./jsonl.js";
import { MetricDefinitions, SUMMARY_KINDS, SummaryTracker, type SummaryKind } from "./metric_defs.js";
import type { MetricValue, RunInfo, RunSink } from "./sink.js";

export const METRICS_FILE = "metrics.jsonl";
export const RUN_FILE = "run.json";
export const SUMMARY_FILE = "summary.json";

export interface LogOptions {
  /** The step these values belong to (default: one past the last). A lower step than the last is an error. */
  step?: number;
}

export interface DefineMetricOptions {
  /** Plot the metric against this other metric (logged in the same call) rather than the run's step. */
  stepMetric?: string;
  /** Which value the summary keeps (default "last"). */
  summary?: SummaryKind;
}

/** Called for every log call; the system-metrics sampler uses it to time steps. */
export type StepListener = (step: number, wallTimeMs: number) => void;

/**
 * One rank's run: a folder with run.json (who, config, metric definitions), metrics.jsonl (one
 * line per `log` call: `_step`, `_time` in seconds since the epoch, `_runtime`, then the values),
 * summary.json, and whatever the sinks write (a TensorBoard event file).
 *
 * A disabled run (mode "rank0" on another rank) checks its arguments the same way and writes nothing.
 */
export class Run {
  /** Final values per metric (the last by default; see defineMetric). Assign to a key to override it. */
  readonly summary: Record<string, unknown>;
  private readonly defs: MetricDefinitions;
  private readonly tracker: SummaryTracker;
  private lastStep: number;
  private lastTime: number;
  private finished = false;
  private readonly started = performance.now();
  private readonly runtimeBefore: number;
  private readonly stepValues = new Map<string, number>();
  private readonly listeners: StepListener[] = [];
  private readonly finishers: (() => void)[] = [];

  constructor(
    private readonly info: RunInfo,
    /** The run's folder, or null for a disabled run. */
    readonly dir: string | null,
    private readonly writer: JsonlWriter | null,
    private readonly sinks: RunSink[],
    resumed: { lastStep: number; lastTime: number; summary: Record<string, unknown>; runtime: number } | null,
  ) {
    this.defs = new MetricDefinitions(info.defines);
    this.summary = resumed?.summary ?? {};
    this.tracker = new SummaryTracker(this.defs, this.summary);
    this.lastStep = resumed?.lastStep ?? -1;
    this.lastTime = resumed?.lastTime ?? 0;
    this.runtimeBefore = resumed?.runtime ?? 0;
    this.writeInfo();
    for (const sink of sinks) sink.start(info);
  }

  get id(): string {
    return this.info.id;
  }
  get experimentId(): string {
    return this.info.experimentId;
  }
  get name(): string {
    return this.info.name;
  }
  get group(): string {
    return this.info.group;
  }
  get project(): string {
    return this.info.project;
  }
  get rank(): number {
    return this.info.rank;
  }
  get config(): Readonly<Record<string, unknown>> {
    return this.info.config;
  }
  /** True when this rank logs nothing (mode "rank0" on a rank other than 0). */
  get disabled(): boolean {
    return this.dir === null;
  }
  /** True when this run continues one that existed (resume "allow" or "must"). */
  get resumed(): boolean {
    return this.info.resumes.length > 0;
  }
  /** The last step logged, -1 before the first. */
  get step(): number {
    return this.lastStep;
  }

  /** Records values for one step: numbers are scalars, strings are text. */
  log(metrics: Record<string, MetricValue | boolean>, options: LogOptions = {}): void {
    checkOptions("run.log", options, ["step"]);
    if (this.finished) throw new Error(`run.log: run ${this.info.id} has finished; call track.init again to start or resume one`);
    if (metrics === null || typeof metrics !== "object" || Array.isArray(metrics)) {
      throw new TypeError(`run.log: metrics must be an object of name → number or string, got ${Array.isArray(metrics) ? "an array" : typeof metrics}`);
    }
    const step = options.step ?? this.lastStep + 1;
    if (!Number.isInteger(step) || step < 0) throw new RangeError(`run.log: step must be a non-negative integer, got ${step}`);
    if (step < this.lastStep) {
      throw new RangeError(
        `run.log: step ${step} is lower than the last step logged (${this.lastStep}) in run ${this.info.id}; steps only go forward ` +
          `(after a restart from a checkpoint, pass its step as resumeFrom to track.init)`,
      );
    }
    const values = new Map<string, MetricValue>();
    for (const [key, raw] of Object.entries(metrics)) {
      if (key.startsWith("_")) throw new Error(`run.log: metric names starting with "_" are reserved (got "${key}")`);
      const value = typeof raw === "boolean" ? Number(raw) : raw;
      if (typeof value !== "number" && typeof value !== "string") {
        throw new TypeError(`run.log: metric "${key}" must be a number, boolean or string, got ${value === null ? "null" : typeof value}`);
      }
      values.set(key, value);
    }
    this.lastStep = step;
    if (this.dir === null) return;
    const wallMs = Date.now();
    // Strictly increasing per run, so that a wall time names one log call in every file (a rewind cuts by it).
    const time = Math.max(wallMs / 1000, this.lastTime + 1e-6);
    this.lastTime = time;
    for (const [key, value] of values) if (typeof value === "number") this.stepValues.set(key, value);
    const steps = new Map<string, number>();
    for (const key of values.keys()) {
      const sm = this.defs.lookup(key)?.stepMetric;
      const x = sm === undefined ? undefined : this.stepValues.get(sm);
      steps.set(key, x !== undefined && Number.isFinite(x) ? Math.round(x) : step);
    }
    this.writer!.append({ _step: step, _time: time, _runtime: this.runtime(), ...Object.fromEntries(values) });
    for (const sink of this.sinks) sink.log(step, time, values, steps);
    for (const [key, value] of values) this.tracker.update(key, value);
    for (const l of this.listeners) l(step, wallMs);
  }

  /** W&B's define_metric: `run.defineMetric("train/*", { stepMetric: "globalStep" })`. */
  defineMetric(name: string, options: DefineMetricOptions = {}): void {
    checkOptions("run.defineMetric", options, ["stepMetric", "summary"]);
    if (typeof name !== "string" || name.length === 0) throw new TypeError(`run.defineMetric: name must be a metric name or a glob such as "train/*", got ${String(name)}`);
    if (options.summary !== undefined && !SUMMARY_KINDS.includes(options.summary)) {
      throw new RangeError(`run.defineMetric: summary must be one of ${SUMMARY_KINDS.join(", ")}, got ${JSON.stringify(options.summary)}`);
    }
    this.defs.add({ name, ...options });
    this.info.defines = this.defs.list();
    this.writeInfo();
  }

  /** Called on every log call with the step and its wall time (for system metrics). */
  onStep(listener: StepListener): void {
    this.listeners.push(listener);
  }

  onFinish(fn: () => void): void {
    this.finishers.push(fn);
  }

  /** Writes the summary, marks the run finished and closes its files. Safe to call twice. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.dir === null) return;
    this.info.finishedAt = new Date().toISOString();
    for (const fn of this.finishers) fn();
    for (const sink of this.sinks) sink.finish(this.info, this.summary);
    this.writeSummary();
    this.writeInfo();
    this.writer!.close();
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** Seconds the run has been running, over all of its resumes. */
  runtime(): number {
    return this.runtimeBefore + (performance.now() - this.started) / 1000;
  }

  /** Written on finish and at exit; a reader of a live or killed run takes the summary from metrics.jsonl. */
  writeSummary(): void {
    if (this.dir === null) return;
    atomicWrite(join(this.dir, SUMMARY_FILE), JSON.stringify({ ...this.summary, _step: this.lastStep, _runtime: this.runtime() }, null, 1));
  }

  private writeInfo(): void {
    if (this.dir !== null) atomicWrite(join(this.dir, RUN_FILE), JSON.stringify(this.info, null, 1));
  }
}

/** Rename is atomic: a reader sees the old file or the new one, never half of one. */
export function atomicWrite(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
