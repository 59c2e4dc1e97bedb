import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../util/atomic_file.js";

/** The per-rank files a trace folder holds: rank-<r>.json, rank-<r>.restart-<n>.json. */
const RANK_FILE = /^rank-(\d+)(?:\.restart-(\d+))?\.json$/;

/**
 * Reads the events of a Trace Event Format file in the JSON Array Format, with or without the
 * closing bracket (a rank killed before it exited leaves none, which the format allows). A line
 * cut short by the kill is skipped; every complete event is kept.
 */
export function readTraceEvents(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, "utf8");
  const body = text.trimEnd();
  const closed = body.endsWith("]") ? body : body.replace(/,\s*$/, "") + "\n]";
  try {
    const parsed = JSON.parse(closed) as unknown;
    if (Array.isArray(parsed)) return parsed as Record<string, unknown>[];
  } catch {
    // Fall through: one event per line, as the recorder writes them.
  }
  const events: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    const item = line.trim().replace(/^[[,]\s*/, "").replace(/[\],]\s*$/, "");
    if (!item.startsWith("{")) continue;
    try {
      events.push(JSON.parse(item) as Record<string, unknown>);
    } catch {
      // The line a kill cut short.
    }
  }
  return events;
}

/** Removes the rank files an earlier job left in `dir`, so that they are not merged into this one's. */
export function clearRankFiles(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) if (RANK_FILE.test(name)) rmSync(join(dir, name), { force: true });
}

export interface MergedTrace {
  path: string;
  /** The per-rank files merged, in rank order. */
  files: string[];
  events: number;
}

/**
 * Merges every rank's file in `dir` into one `trace.json` (written atomically) that
 * ui.perfetto.dev opens with one process per rank. Each rank already wrote its times on rank 0's
 * clock. Ranks that failed are merged as far as their files go. Null when there is no rank file.
 */
export function mergeTraces(dir: string, out = join(dir, "trace.json")): MergedTrace | null {
  if (!existsSync(dir)) return null;
  const files = readdirSync(dir)
    .map((name) => ({ name, m: RANK_FILE.exec(name) }))
    .filter((f): f is { name: string; m: RegExpExecArray } => f.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]) || Number(a.m[2] ?? 0) - Number(b.m[2] ?? 0))
    .map((f) => join(dir, f.name));
  if (files.length === 0) return null;
  const lines: string[] = [];
  for (const file of files) for (const event of readTraceEvents(file)) lines.push(JSON.stringify(event));
  writeFileAtomic(out, [Buffer.from("[\n" + lines.join(",\n") + "\n]\n")]);
  return { path: out, files, events: lines.length };
}
