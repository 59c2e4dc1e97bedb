/**
 * The timeline's hooks, at the bottom of the layers so that autograd, nn, optim, data,
 * checkpoint, the DDP reducer and the comm client can all mark where their work begins and ends.
 * The track layer installs the recorder (track/trace); until then `tracing.on` is false and each
 * hook costs one boolean check.
 *
 * Times are microseconds on the process's common clock, performance.timeOrigin + performance.now():
 * every thread of a process reads the same value (worker threads share the main thread's origin),
 * and on one host so does every process, up to the wall clock's reading at each start. The
 * recorder adds the offset to rank 0's clock (measured through the store) when it writes.
 */

/** Thread ids in the trace: the thread that runs the training loop, and communication. */
export const TID_TRAIN = 1;
export const TID_COMM = 2;

export type TraceArgs = Record<string, string | number | boolean>;

export interface TraceRecorder {
  /** A complete event ("X") on thread `tid` from `startUs` to `endUs` (process clock). */
  span(tid: number, name: string, startUs: number, endUs: number, args?: TraceArgs): void;
  /** An instant event ("i") on thread `tid`. */
  instant(tid: number, name: string, atUs: number, args?: TraceArgs): void;
}

/** Events recorded elsewhere (the comm worker's ring) that the recorder collects when it writes. */
export interface TraceSource {
  /** Tracing started (true) or stopped (false): the source starts or stops recording. */
  setEnabled(on: boolean): void;
  /** Moves what was recorded since the last call into `emit`, already in the recorder's terms. */
  drain(emit: TraceRecorder): void;
}

/** The one flag each hook checks. */
export const tracing = { on: false };

let recorder: TraceRecorder | null = null;
const sources = new Set<TraceSource>();

/** Now on the process clock, in microseconds. */
export function traceNow(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/** Records a span from `startUs` to now on thread `tid` (a no-op when tracing stopped meanwhile). */
export function traceSpan(tid: number, name: string, startUs: number, args?: TraceArgs): void {
  recorder?.span(tid, name, startUs, traceNow(), args);
}

export function traceInstant(tid: number, name: string, args?: TraceArgs): void {
  recorder?.instant(tid, name, traceNow(), args);
}

export function currentTraceRecorder(): TraceRecorder | null {
  return recorder;
}

/** Installs (or with null removes) the recorder; sources start or stop recording with it. */
export function setTraceRecorder(r: TraceRecorder | null): void {
  recorder = r;
  tracing.on = r !== null;
  for (const s of sources) s.setEnabled(tracing.on);
}

export function addTraceSource(source: TraceSource): void {
  sources.add(source);
  source.setEnabled(tracing.on);
}

/** What the source still holds goes to the recorder first. */
export function removeTraceSource(source: TraceSource): void {
  if (recorder) source.drain(recorder);
  sources.delete(source);
  source.setEnabled(false);
}

export function drainTraceSources(into: TraceRecorder): void {
  for (const s of sources) s.drain(into);
}

/** What a pipeline's send or receive carries across the boundary after stage `boundary`. */
export const PIPELINE_MESSAGES = ["header", "activation", "gradient"] as const;
export type PipelineMessage = (typeof PIPELINE_MESSAGES)[number];

/** What a collective or a send/receive is for: a DDP bucket, or a pipeline's message of one micro-batch. */
export interface CommTraceTag {
  bucket?: number;
  params?: number;
  pipeline?: { what: PipelineMessage; mb: number; boundary: number };
}

/**
 * What the next collective submitted on this thread is for, so that the comm thread's span names
 * it. Set only while tracing, around the one call that submits it.
 */
export const commTraceTag: { current: CommTraceTag | null } = { current: null };

/**
 * Store-based steps the distributed layer runs right after a process group forms, while tracing
 * (the clock alignment of track/trace); installed by the recorder.
 */
export interface TraceGroupContext {
  rank: number;
  worldSize: number;
  store: {
    set(key: string, value: string): Promise<void>;
    get(key: string, timeoutMs?: number): Promise<Uint8Array>;
  } | null;
  prefix: string;
}
export const traceGroupHook: { onInit: ((ctx: TraceGroupContext) => Promise<void>) | null } = { onInit: null };

/** Wraps an iterator so that each `next()` is a span named `name` on the training thread. */
export function tracedIterator<T>(inner: Iterator<T>, name: string): IterableIterator<T> {
  let index = 0;
  return {
    [Symbol.iterator]() {
      return this;
    },
    next(): IteratorResult<T> {
      const t0 = traceNow();
      const r = inner.next();
      if (!r.done) traceSpan(TID_TRAIN, name, t0, { batch: index++ });
      return r;
    },
    return(value?: unknown): IteratorResult<T> {
      return inner.return ? inner.return(value) : { done: true, value: value as T };
    },
  };
}

export function tracedAsyncIterator<T>(inner: AsyncIterator<T>, name: string): AsyncIterableIterator<T> {
  let index = 0;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next(): Promise<IteratorResult<T>> {
      const t0 = traceNow();
      const r = await inner.next();
      if (!r.done) traceSpan(TID_TRAIN, name, t0, { batch: index++ });
      return r;
    },
    async return(value?: unknown): Promise<IteratorResult<T>> {
      return inner.return ? inner.return(value) : { done: true, value: value as T };
    },
  };
}
