import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { drainTraceSources, TID_COMM, TID_TRAIN, type TraceArgs, type TraceRecorder, traceNow } from "../../util/trace.js";

/** Events held in memory before they are written; memory stays bounded whatever the run's length. */
const CAPACITY = 4096;
/** Once the clock is settled, events are written at least this often (µs): a killed rank loses at most this much. */
const FLUSH_EVERY_US = 1_000_000;

const enum Phase {
  Complete = 0,
  Instant = 1,
}

/**
 * Writes one rank's timeline as a Trace Event Format file (the JSON Array Format Perfetto and
 * chrome://tracing open): `[` and one event per line, each later line starting with a comma. The
 * closing `]` is written at exit; a process killed before leaves a file without it, which the
 * format allows, so a crash never leaves an unreadable trace. Events wait in typed arrays and are
 * written every CAPACITY events or every second, whichever comes first.
 *
 * pid is the rank and tid the thread (1 training, 2 comm), so that every rank of a merged trace
 * is a process with its two threads. Times are written on rank 0's clock: the recorder adds
 * `correctionUs` (this rank's offset to rank 0, measured at initProcessGroup) when it writes.
 */
export class TraceFileRecorder implements TraceRecorder {
  private readonly starts = new Float64Array(CAPACITY);
  private readonly ends = new Float64Array(CAPACITY);
  private readonly tids = new Uint8Array(CAPACITY);
  private readonly phases = new Uint8Array(CAPACITY);
  private readonly names: string[] = new Array<string>(CAPACITY);
  private readonly args: (TraceArgs | undefined)[] = new Array<TraceArgs | undefined>(CAPACITY);
  private n = 0;
  private fd: number | null = null;
  private lastFlushUs = traceNow();
  private closed = false;
  /** Added to every time written: offset to rank 0's clock (plus a test's injected skew). */
  correctionUs = 0;
  /** Labels of this process in the trace (the clock alignment's result). */
  labels: string[] = [];
  /**
   * False until the clock offset is known (a rank of a job before initProcessGroup): until then
   * events are written only when the buffer is full, so that they get the offset too.
   */
  settled: boolean;

  constructor(
    private readonly fileFor: (rank: number) => string,
    public rank: number,
    settled: boolean,
  ) {
    this.settled = settled;
  }

  /** The file this rank writes (or will write at its first flush). */
  get path(): string {
    return this.fileFor(this.rank);
  }

  span(tid: number, name: string, startUs: number, endUs: number, args?: TraceArgs): void {
    this.push(Phase.Complete, tid, name, startUs, endUs, args);
  }

  instant(tid: number, name: string, atUs: number, args?: TraceArgs): void {
    this.push(Phase.Instant, tid, name, atUs, atUs, args);
  }

  private push(phase: Phase, tid: number, name: string, startUs: number, endUs: number, args: TraceArgs | undefined): void {
    if (this.closed) return;
    const i = this.n++;
    this.phases[i] = phase;
    this.tids[i] = tid;
    this.names[i] = name;
    this.starts[i] = startUs;
    this.ends[i] = endUs;
    this.args[i] = args;
    if (this.n === CAPACITY || (this.settled && endUs - this.lastFlushUs > FLUSH_EVERY_US)) this.flush();
  }

  /** Writes what is buffered here and in the sources (the comm worker's ring). */
  flush(): void {
    if (this.closed) return;
    const lines: string[] = [];
    const direct: TraceRecorder = {
      span: (tid, name, s, e, args) => lines.push(this.format(Phase.Complete, tid, name, s, e, args)),
      instant: (tid, name, at, args) => lines.push(this.format(Phase.Instant, tid, name, at, at, args)),
    };
    drainTraceSources(direct);
    for (let i = 0; i < this.n; i++) {
      lines.push(this.format(this.phases[i] as Phase, this.tids[i], this.names[i], this.starts[i], this.ends[i], this.args[i]));
      this.names[i] = "";
      this.args[i] = undefined;
    }
    this.n = 0;
    this.lastFlushUs = traceNow();
    if (lines.length === 0 && this.fd !== null) return;
    const head = this.fd === null ? this.open() : "";
    writeSync(this.fd!, head + (lines.length > 0 ? ",\n" + lines.join(",\n") : ""));
  }

  /** Flushes, writes the closing bracket and closes the file; later events are ignored. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    writeSync(this.fd!, "\n]\n");
    closeSync(this.fd!);
    this.fd = null;
  }

  /** Opens the file and returns its head: `[` and the metadata that names the process and its threads. */
  private open(): string {
    const path = this.path;
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "w");
    const pid = this.rank;
    const meta = (name: string, tid: number, args: Record<string, unknown>) => JSON.stringify({ name, ph: "M", pid, tid, args });
    const events = [
      meta("process_name", 0, { name: `rank ${pid}` }),
      meta("process_sort_index", 0, { sort_index: pid }),
      meta("thread_name", TID_TRAIN, { name: "training" }),
      meta("thread_sort_index", TID_TRAIN, { sort_index: 0 }),
      meta("thread_name", TID_COMM, { name: "comm" }),
      meta("thread_sort_index", TID_COMM, { sort_index: 1 }),
    ];
    if (this.labels.length > 0) events.push(meta("process_labels", 0, { labels: this.labels.join(", ") }));
    return "[\n" + events.join(",\n");
  }

  private format(phase: Phase, tid: number, name: string, startUs: number, endUs: number, args: TraceArgs | undefined): string {
    const ts = round(startUs + this.correctionUs);
    // Built by hand: this runs for every event, and an object per event for JSON.stringify costs more.
    const head = `{"name":${JSON.stringify(name)},`;
    const timing = phase === Phase.Complete ? `"ph":"X","ts":${ts},"dur":${round(Math.max(0, endUs - startUs))}` : `"ph":"i","s":"t","ts":${ts}`;
    return `${head}${timing},"pid":${this.rank},"tid":${tid}${args ? `,"args":${JSON.stringify(args)}` : ""}}`;
  }
}

/** Nanosecond resolution is all a µs timestamp needs. */
function round(us: number): number {
  return Math.round(us * 1000) / 1000;
}
