import { dirname, join, resolve } from "node:path";
import { isMainThread } from "node:worker_threads";
import { checkArity } from "../../util/options.js";
import { setTraceRecorder, traceGroupHook, traceNow, TID_TRAIN, type TraceGroupContext } from "../../util/trace.js";
import { alignClock } from "./clock_align.js";
import { TraceFileRecorder } from "./recorder.js";

/** The folder `ringrun --trace <dir>` hands its workers; set by hand, a process traces without ringrun. */
export const TRACE_ENV = "RINGTORCH_TRACE";
/** The merged file ringrun writes into the trace folder when the job ends. */
export const MERGED_TRACE_FILE = "trace.json";

let active: TraceFileRecorder | null = null;
let exitHook: (() => void) | null = null;
let timer: NodeJS.Timeout | null = null;
/** Test hook: pretends this process's clock is off by this much (µs), as a second host's may be. */
let skewUs = 0;

export interface TraceInfo {
  /** The folder the trace goes to. */
  dir: string;
  /** This rank's own file in it. */
  file: string;
  /** The merged file of every rank, when ringrun writes one at the end of the job (null without ringrun). */
  merged: string | null;
}

/**
 * Starts recording this process's timeline into `dir` (what RINGTORCH_TRACE does at start-up):
 * spans of forward, backward, optimizer steps, data loading and checkpoint saves on the training
 * thread, and of each collective and DDP bucket on the comm thread. Start it before
 * initProcessGroup for the ranks' clocks to be aligned. The file is
 * `<dir>/rank-<rank>.json` (`rank-<rank>.restart-<n>.json` after a restart by ringrun).
 */
export function startTrace(dir: string): TraceInfo {
  checkArity("track.startTrace", arguments, 1, "track.startTrace(dir)");
  if (typeof dir !== "string" || dir === "") throw new TypeError(`track.startTrace: expected the folder to write the trace into, got ${JSON.stringify(dir)}`);
  if (active) throw new Error(`track.startTrace: this process is already tracing into ${active.path}; call track.stopTrace() first`);
  const folder = resolve(dir);
  const env = process.env;
  const restart = Number(env.RINGTORCH_RESTART_COUNT ?? 0);
  const suffix = restart > 0 ? `.restart-${restart}` : "";
  const launched = env.RANK !== undefined && /^\d+$/.test(env.RANK);
  // Until initProcessGroup, a rank of a job (WORLD_SIZE > 1) does not know its clock offset, and a
  // process without RANK (a single process, or a job that passes ranks to initProcessGroup) not
  // even its rank, which names the file: each writes only when its buffer is full, or at exit.
  const settled = launched && !(Number(env.WORLD_SIZE) > 1);
  const recorder = new TraceFileRecorder((r) => join(folder, `rank-${r}${suffix}.json`), launched ? Number(env.RANK) : 0, settled);
  recorder.correctionUs = skewUs;
  active = recorder;
  traceGroupHook.onInit = (ctx) => onGroup(recorder, ctx);
  exitHook = () => stopTrace();
  process.on("exit", exitHook);
  // A loop that yields to the event loop may record nothing on this thread for a while; the comm ring still fills.
  timer = setInterval(() => recorder.settled && recorder.flush(), 1000);
  timer.unref();
  setTraceRecorder(recorder);
  return traceInfo()!;
}

/** Stops recording and completes the file (closing bracket included); returns its path, or null when not tracing. */
export function stopTrace(): string | null {
  const recorder = active;
  if (!recorder) return null;
  setTraceRecorder(null);
  recorder.close();
  if (timer) clearInterval(timer);
  timer = null;
  if (exitHook) process.off("exit", exitHook);
  exitHook = null;
  traceGroupHook.onInit = null;
  active = null;
  return recorder.path;
}

/** Where this process's trace goes, or null when it is not tracing. */
export function traceInfo(): TraceInfo | null {
  if (!active) return null;
  const dir = dirname(active.path);
  const underRingrun = process.env.RINGTORCH_AGENT_PID !== undefined && process.env[TRACE_ENV] !== undefined;
  return { dir, file: active.path, merged: underRingrun ? join(dir, MERGED_TRACE_FILE) : null };
}

/** Right after a process group forms: take its rank, align the clock, then write freely. */
async function onGroup(recorder: TraceFileRecorder, ctx: TraceGroupContext): Promise<void> {
  recorder.rank = ctx.rank;
  const t0 = traceNow();
  try {
    const { offsetUs, rttUs } = await alignClock(ctx, () => traceNow() + skewUs);
    recorder.correctionUs = skewUs + offsetUs;
    if (ctx.rank > 0) recorder.labels.push(`clock offset to rank 0: ${offsetUs.toFixed(1)} µs (round trip ${rttUs.toFixed(1)} µs)`);
    if (active === recorder) {
      active.instant(TID_TRAIN, "clock aligned with rank 0", traceNow(), { offsetUs, rttUs, tookUs: traceNow() - t0 });
    }
  } catch (err) {
    console.warn(`ringtorch trace: rank ${ctx.rank} could not align its clock with rank 0 (${(err as Error).message}); its times may be off`);
  }
  recorder.settled = true;
}

/** This process's clock as the trace writes it (rank 0's, once aligned), µs; for tests. */
export function alignedTraceNow(): number {
  return traceNow() + (active ? active.correctionUs : skewUs);
}

/** Test hook: makes this process's trace clock read `us` ahead of the true one (before startTrace). */
export function setTraceClockSkewForTest(us: number): void {
  skewUs = us;
  if (active) active.correctionUs = us;
}

/** RINGTORCH_TRACE=<dir> traces every process that loads ringtorch. */
export function startTraceFromEnv(): void {
  const dir = process.env[TRACE_ENV];
  // Worker threads that load ringtorch are not ranks: the main thread's recorder covers the process.
  if (dir && !active && isMainThread) startTrace(dir);
}
