import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join, relative } from "node:path";
import { readJsonl } from "../jsonl.js";
import { METRICS_FILE, RUN_FILE, SUMMARY_FILE } from "../run.js";
import type { RunInfo } from "../sink.js";
import { SYSTEM_FILE } from "../system_metrics.js";

export type Status = "finished" | "running" | "stopped";

export interface CollectedRun {
  /** The run folder relative to the report's root. */
  path: string;
  info: RunInfo;
  status: Status;
  /** Numeric metrics: name → [x, y] points, x being the stepMetric's value or the run's step. */
  series: Record<string, [number, number][]>;
  /** Text metrics: name → [step, text]. */
  texts: Record<string, [number, string][]>;
  /** System metrics: name → [seconds since the first sample, value]. */
  system: Record<string, [number, number][]>;
  summary: Record<string, unknown>;
  /** The x-axis of each metric: "_step" or its stepMetric. */
  axes: Record<string, string>;
}

/** Run folders (those holding run.json) at most `depth` levels below `root`. */
export function findRunDirs(root: string, depth = 4): string[] {
  if (existsSync(join(root, RUN_FILE))) return [root];
  if (depth === 0) return [];
  const out: string[] = [];
  for (const name of readdirSync(root).sort(naturalOrder)) {
    const p = join(root, name);
    if (statSync(p).isDirectory()) out.push(...findRunDirs(p, depth - 1));
  }
  return out;
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** Whether the process that wrote a run is still alive (only knowable on the same host). */
function status(info: RunInfo): Status {
  if (info.finishedAt) return "finished";
  if (info.host !== hostname()) return "running";
  try {
    process.kill(info.pid, 0);
    return "running";
  } catch {
    return "stopped";
  }
}

function globMatch(pattern: string, name: string): boolean {
  return new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(name);
}

/** Reads one run folder as it is now: a run still writing (or killed) reads up to its last whole record. */
export function collectRun(root: string, dir: string): CollectedRun {
  const info = JSON.parse(readFileSync(join(dir, RUN_FILE), "utf8")) as RunInfo;
  const axisOf = (name: string): string => {
    const exact = info.defines.find((d) => d.name === name);
    const def = exact ?? [...info.defines].reverse().find((d) => d.name.includes("*") && globMatch(d.name, name));
    return def?.stepMetric ?? "_step";
  };
  const series: CollectedRun["series"] = {};
  const texts: CollectedRun["texts"] = {};
  const axes: Record<string, string> = {};
  const lastSeen = new Map<string, number>();
  const computed: Record<string, unknown> = {};
  for (const { value } of readJsonl<Record<string, unknown>>(join(dir, METRICS_FILE))) {
    const step = value._step as number;
    for (const [k, v] of Object.entries(value)) if (typeof v === "number") lastSeen.set(k, v);
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith("_")) continue;
      computed[k] = v;
      const axis = (axes[k] ??= axisOf(k));
      if (typeof v === "number") {
        const x = axis === "_step" ? step : lastSeen.get(axis);
        if (x !== undefined) (series[k] ??= []).push([x, v]);
      } else if (typeof v === "string") (texts[k] ??= []).push([step, v]);
    }
  }
  const system: CollectedRun["system"] = {};
  let t0: number | undefined;
  for (const { value } of readJsonl<Record<string, number>>(join(dir, SYSTEM_FILE))) {
    t0 ??= value._time;
    for (const [k, v] of Object.entries(value)) if (k.startsWith("system/") && Number.isFinite(v)) (system[k] ??= []).push([value._time - t0, v]);
  }
  // summary.json is written at finish; a live or killed run's summary is its last values.
  const summaryPath = join(dir, SUMMARY_FILE);
  const summary = existsSync(summaryPath) && info.finishedAt ? (JSON.parse(readFileSync(summaryPath, "utf8")) as Record<string, unknown>) : computed;
  return { path: relative(root, dir) || ".", info, status: status(info), series, texts, system, summary, axes };
}

export function collect(root: string): CollectedRun[] {
  if (!existsSync(root)) throw new Error(`ringtorch report: there is no folder ${root} (pass the experiment folder given to track.init as dir)`);
  const dirs = findRunDirs(root);
  if (dirs.length === 0) throw new Error(`ringtorch report: no runs under ${root} (a run is a folder with ${RUN_FILE}, made by track.init)`);
  return dirs.map((d) => collectRun(root, d));
}
