import { closeSync, fstatSync, ftruncateSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { MetricValue, RunInfo, RunSink } from "../sink.js";
import { experimentEvent, fileVersionEvent, sessionEndEvent, sessionStartEvent, summaryEvent, type HParamValue, type SummaryValue } from "./events.js";
import { eventWallTime, frameRecord, readRecords } from "./record.js";

/**
 * Writes a run's log calls as a TensorBoard event file: numbers as scalars, strings as text, the
 * config as hparams (session start at the first write, the experiment with the run's end metrics
 * at finish). One file per run folder, appended to when the run resumes, because TensorBoard
 * follows only the newest event file of a directory.
 */
export class TensorBoardSink implements RunSink {
  private fd: number;
  readonly path: string;
  private startWritten = false;

  constructor(dir: string, resuming: boolean) {
    const existing = resuming ? readdirSync(dir).filter((f) => f.includes("tfevents")).sort() : [];
    this.path = join(dir, existing.at(-1) ?? `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${hostname()}.${process.pid}.0`);
    this.fd = openSync(this.path, "a");
    const size = fstatSync(this.fd).size;
    if (size > 0) {
      // A record torn by a kill would hide every later one from readers: cut it off before appending.
      const { validEnd } = readRecords(readFileSync(this.path));
      if (validEnd !== size) ftruncateSync(this.fd, validEnd);
      this.startWritten = true;
    }
    if (!this.startWritten) this.write(fileVersionEvent(Date.now() / 1000));
  }

  private write(event: Uint8Array): void {
    writeSync(this.fd, frameRecord(event));
  }

  /** Written once, before the first values, so that the hparams dashboard lists the run while it goes. */
  start(info: RunInfo): void {
    if (this.startWritten) return;
    this.startWritten = true;
    this.write(sessionStartEvent(Date.now() / 1000, hparamsOf(info.config), info.group));
  }

  log(_step: number, wallTime: number, metrics: ReadonlyMap<string, MetricValue>, steps: ReadonlyMap<string, number>): void {
    // Values plotted against different steps go in separate events; most calls make one.
    const byStep = new Map<number, SummaryValue[]>();
    for (const [tag, v] of metrics) {
      const s = steps.get(tag)!;
      let list = byStep.get(s);
      if (!list) byStep.set(s, (list = []));
      list.push(typeof v === "number" ? { tag, scalar: v } : { tag, text: v });
    }
    const events = [...byStep].map(([s, values]) => frameRecord(summaryEvent(wallTime, s, values)));
    writeSync(this.fd, events.length === 1 ? events[0] : Buffer.concat(events));
  }

  rewind(wallTime: number): void {
    const { records } = readRecords(readFileSync(this.path));
    // Keep the file_version and hparams events (they come before any value at or after wallTime only at the start).
    const cut = records.findIndex((r, i) => i > 0 && (eventWallTime(r.data) ?? -Infinity) >= wallTime);
    if (cut >= 0) ftruncateSync(this.fd, records[cut].start);
  }

  finish(info: RunInfo, summary: Record<string, unknown>): void {
    const now = Date.now() / 1000;
    const metrics = Object.keys(summary).filter((k) => typeof summary[k] === "number");
    this.write(experimentEvent(now, hparamsOf(info.config), metrics));
    this.write(sessionEndEvent(now));
    closeSync(this.fd);
  }
}

/** Hyperparameters TensorBoard can show: numbers, strings and booleans; nested objects flattened with dots. */
export function hparamsOf(config: Record<string, unknown>, prefix = "", out = new Map<string, HParamValue>()): Map<string, HParamValue> {
  for (const [k, v] of Object.entries(config)) {
    const key = prefix + k;
    if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") out.set(key, v);
    else if (v && typeof v === "object" && !Array.isArray(v)) hparamsOf(v as Record<string, unknown>, `${key}.`, out);
    else if (v !== undefined) out.set(key, JSON.stringify(v));
  }
  return out;
}
