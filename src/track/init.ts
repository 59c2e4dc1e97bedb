import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setCheckpointRunId } from "../checkpoint/run_id.js";
import { getRank, getWorldSize, isInitialized } from "../distributed/init.js";
import { checkOptions } from "../util/options.js";
import { JsonlWriter, readJsonl } from "./jsonl.js";
import { MetricDefinitions, SummaryTracker } from "./metric_defs.js";
import { METRICS_FILE, RUN_FILE, Run } from "./run.js";
import type { MetricValue, RunInfo, RunSink } from "./sink.js";
import { startSystemMetrics, type SystemMetricsOptions } from "./system_metrics.js";
import { TensorBoardSink } from "./tensorboard/sink.js";

export interface InitOptions {
  /** A label for the runs (default "ringtorch"). */
  project?: string;
  /** Runs that belong together: by default the id, so that every rank of one job is one group. */
  group?: string;
  /** Display name (default `rank-<rank>` in mode "all", else the id). */
  name?: string;
  /**
   * The experiment's id, the same on every rank. Each rank's run id is `<id>-<rank>` in mode "all"
   * and the id itself in mode "rank0". Default: ringrun's run id (RINGTORCH_RUN_ID, the same across
   * restarts), else a fresh random id (one process only).
   */
  id?: string;
  /**
   * W&B's meaning. "never" (default): the run must not exist yet. "allow": continue it if it exists,
   * else start it. "must": it must exist. A resumed run appends to its files.
   */
  resume?: "allow" | "must" | "never";
  /**
   * When resuming from a checkpoint: keep the records up to this step and drop later ones (they were
   * logged after the checkpoint and will be logged again). Usually `(await checkpoint.resume(…)).step`.
   */
  resumeFrom?: number;
  /** The experiment's folder; each rank's run is `<dir>/rank-<rank>`. Default `runs/<group>`. */
  dir?: string;
  /** Hyperparameters, saved in run.json and as TensorBoard hparams. */
  config?: Record<string, unknown>;
  /** "all" (default): one run per rank. "rank0": only global rank 0 logs; other ranks get a disabled run. */
  mode?: "rank0" | "all";
  /** TensorBoard event file beside the JSONL (default true). */
  tensorboard?: boolean;
  /** System metrics sampled by a worker thread, or false for none (default: every 2 s). */
  systemMetrics?: SystemMetricsOptions | false;
}

const INIT_KEYS = ["project", "group", "name", "id", "resume", "resumeFrom", "dir", "config", "mode", "tensorboard", "systemMetrics"];

let current: Run | null = null;

/** The run started by the last track.init, until it finishes. */
export function currentRun(): Run | null {
  return current && !current.isFinished ? current : null;
}

function worldPosition(): { rank: number; worldSize: number; localRank: number } {
  const env = process.env;
  const rank = isInitialized() ? getRank() : Number(env.RANK ?? 0);
  const worldSize = isInitialized() ? getWorldSize() : Number(env.WORLD_SIZE ?? 1);
  return { rank, worldSize, localRank: Number(env.LOCAL_RANK ?? rank) };
}

function defaultId(worldSize: number): string {
  const fromLauncher = process.env.RINGTORCH_RUN_ID ?? process.env.TORCHELASTIC_RUN_ID;
  if (fromLauncher && fromLauncher !== "none") return fromLauncher;
  if (worldSize > 1) {
    throw new Error("track.init: pass an id when ranks are started without ringrun (they must agree on it; ringrun sets RINGTORCH_RUN_ID)");
  }
  return randomBytes(4).toString("hex");
}

/**
 * Starts or resumes this rank's run (W&B's wandb.init, offline). The same call on every rank:
 *
 *   const run = track.init({ project: "mlp", config: { lr }, resume: "allow" });
 *   run.log({ "train/loss": loss }, { step });
 *   run.finish();
 */
export function init(options: InitOptions = {}): Run {
  checkOptions("track.init", options, INIT_KEYS);
  if (options.systemMetrics) checkOptions("track.init systemMetrics", options.systemMetrics, ["intervalMs", "samplesPerStep"]);
  const mode = options.mode ?? "all";
  const resume = options.resume ?? "never";
  if (mode !== "all" && mode !== "rank0") throw new RangeError(`track.init: mode must be "all" or "rank0", got ${JSON.stringify(mode)}`);
  if (!["allow", "must", "never"].includes(resume)) throw new RangeError(`track.init: resume must be "allow", "must" or "never", got ${JSON.stringify(resume)}`);
  if (options.resumeFrom !== undefined && (!Number.isInteger(options.resumeFrom) || options.resumeFrom < 0)) {
    throw new RangeError(`track.init: resumeFrom must be a non-negative integer step, got ${options.resumeFrom}`);
  }
  if (currentRun()) throw new Error(`track.init: run ${current!.id} is still going; call run.finish() before starting another`);
  const { rank, worldSize, localRank } = worldPosition();
  if (options.id === undefined && resume === "must") throw new Error('track.init: resume "must" needs the id of the run to resume');
  const experimentId = options.id ?? defaultId(worldSize);
  if (!/^[\w.-]+$/.test(experimentId)) throw new Error(`track.init: id must be letters, digits, ".", "_" or "-", got ${JSON.stringify(experimentId)}`);
  const id = mode === "all" ? `${experimentId}-${rank}` : experimentId;
  const group = options.group ?? experimentId;
  const experimentDir = resolve(options.dir ?? join("runs", group));
  const info: RunInfo = {
    id,
    experimentId,
    name: options.name ?? (mode === "all" ? `rank-${rank}` : experimentId),
    group,
    project: options.project ?? "ringtorch",
    rank,
    localRank,
    worldSize,
    mode,
    host: hostname(),
    pid: process.pid,
    config: { ...(options.config ?? {}) },
    startedAt: new Date().toISOString(),
    resumes: [],
    finishedAt: null,
    defines: [],
  };
  setCheckpointRunId(experimentId);
  if (mode === "rank0" && rank !== 0) return (current = new Run(info, null, null, [], null));

  const dir = join(experimentDir, `rank-${rank}`);
  const runFile = join(dir, RUN_FILE);
  const existing = existsSync(runFile) ? (JSON.parse(readFileSync(runFile, "utf8")) as RunInfo) : null;
  if (existing && existing.id !== id) {
    throw new Error(`track.init: ${dir} holds run "${existing.id}", not "${id}"; pass dir: to put this run elsewhere, or id: "${existing.experimentId}" to continue that one`);
  }
  if (existing && resume === "never") {
    throw new Error(`track.init: run "${id}" already exists in ${dir}; pass resume: "allow" to append to it, or a new id`);
  }
  if (!existing && resume === "must") throw new Error(`track.init: resume "must" but run "${id}" does not exist (no ${runFile})`);
  mkdirSync(dir, { recursive: true });

  const writer = new JsonlWriter(join(dir, METRICS_FILE));
  const sinks: RunSink[] = [];
  if (options.tensorboard ?? true) sinks.push(new TensorBoardSink(dir, existing !== null));
  let resumed: ConstructorParameters<typeof Run>[4] = null;
  if (existing) {
    let records = readJsonl<Record<string, MetricValue> & { _step: number; _time: number; _runtime: number }>(writer.path);
    if (options.resumeFrom !== undefined) {
      const cut = records.findIndex((r) => r.value._step > options.resumeFrom!);
      if (cut >= 0) {
        writer.truncate(records[cut].start);
        for (const sink of sinks) sink.rewind(records[cut].value._time);
        records = records.slice(0, cut);
      }
    }
    const defs = new MetricDefinitions(existing.defines);
    const summary: Record<string, unknown> = {};
    const tracker = new SummaryTracker(defs, summary);
    for (const { value } of records) for (const [k, v] of Object.entries(value)) if (!k.startsWith("_")) tracker.update(k, v);
    const last = records.at(-1)?.value;
    resumed = { lastStep: last?._step ?? -1, lastTime: last?._time ?? 0, summary, runtime: last?._runtime ?? 0 };
    Object.assign(info, {
      startedAt: existing.startedAt,
      config: { ...existing.config, ...info.config },
      defines: existing.defines,
      resumes: [...existing.resumes, { at: info.startedAt, fromStep: resumed.lastStep, pid: process.pid }],
    });
  }
  const run = new Run(info, dir, writer, sinks, resumed);
  if (options.systemMetrics !== false) startSystemMetrics(run, dir, options.systemMetrics ?? {});
  // A run the script never finished still leaves its summary (a SIGKILL leaves only the JSONL, which is enough).
  process.once("exit", () => {
    try {
      if (!run.isFinished) run.writeSummary();
    } catch {
      // The folder is gone (a test cleaned it up): nothing to keep.
    }
  });
  return (current = run);
}
