import { type CommDType, DTYPE_BYTES } from "../dtypes.js";
import type { ReduceOpName } from "../reduce_op.js";
import { PIPELINE_MESSAGES, TID_COMM, type CommTraceTag, type TraceArgs, type TraceRecorder, type TraceSource } from "../../util/trace.js";
import type { Algorithm, OpMessage, Request, RequestKind } from "./messages.js";

/**
 * The comm worker's spans, handed to the main thread through shared memory: the worker writes a
 * fixed-size record per collective, the main thread's trace recorder reads them when it writes
 * its file. No message is posted and nothing waits: the main thread may be busy in a training
 * loop for a second at a time, and at exit it still collects every record the worker finished.
 * One writer (the worker), one reader (the main thread); when the reader falls a whole ring
 * behind, new records are counted as dropped rather than overwriting unread ones.
 */
const CAPACITY = 2048;
const SLOTS = 18;
/** Int32 header: 0 enabled, 1 records written, 2 records read, 3 records dropped. */
const HEADER_BYTES = 16;

const KINDS: RequestKind[] = ["allReduce", "broadcast", "reduce", "allGather", "reduceScatter", "scatter", "gather", "allToAll", "barrier", "send", "recv"];
const ALGORITHMS: (Algorithm | "direct")[] = ["direct", "ring", "rhd", "tree"];
const REDUCE_OPS: ReduceOpName[] = ["sum", "avg", "product", "min", "max"];
const DTYPES: CommDType[] = ["float32", "float64", "int32", "bfloat16", "uint8", "float16"];

/** One collective as the timeline shows it. Bucket work spans [outerStart, outerEnd], the collective itself [start, end]. */
export interface CollectiveRecord {
  outerStart: number;
  start: number;
  end: number;
  outerEnd: number;
  msg: OpMessage;
  algorithm: Algorithm | "direct";
  failed: boolean;
}

export class CommTraceRing implements TraceSource {
  private readonly header: Int32Array;
  private readonly slots: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.header = new Int32Array(buffer, 0, 4);
    this.slots = new Float64Array(buffer, HEADER_BYTES, CAPACITY * SLOTS);
  }

  static create(): CommTraceRing {
    return new CommTraceRing(new SharedArrayBuffer(HEADER_BYTES + CAPACITY * SLOTS * 8));
  }

  /** Worker side: whether to record at all (one load per collective when tracing is off). */
  get enabled(): boolean {
    return this.header[0] === 1;
  }

  setEnabled(on: boolean): void {
    Atomics.store(this.header, 0, on ? 1 : 0);
  }

  /** Worker side. */
  write(r: CollectiveRecord): void {
    const written = Atomics.load(this.header, 1);
    if (written - Atomics.load(this.header, 2) >= CAPACITY) {
      Atomics.add(this.header, 3, 1);
      return;
    }
    const m = r.msg;
    const req = m.req as Request & { op?: ReduceOpName };
    const at = (written % CAPACITY) * SLOTS;
    this.slots.set(
      [
        r.outerStart, r.start, r.end, r.outerEnd, KINDS.indexOf(req.kind), requestBytes(req, m.dtype), m.seq, m.group,
        ALGORITHMS.indexOf(r.algorithm), req.op === undefined ? -1 : REDUCE_OPS.indexOf(req.op), DTYPES.indexOf(m.dtype),
        m.trace?.bucket ?? NaN, m.trace?.params ?? 0, r.failed ? 1 : 0,
        m.trace?.pipeline ? PIPELINE_MESSAGES.indexOf(m.trace.pipeline.what) : -1, m.trace?.pipeline?.mb ?? 0, m.trace?.pipeline?.boundary ?? 0,
        "peer" in req ? req.peer : -1,
      ],
      at,
    );
    Atomics.store(this.header, 1, written + 1);
  }

  /** Main thread side: every finished record, as spans on the comm thread. */
  drain(emit: TraceRecorder): void {
    const written = Atomics.load(this.header, 1);
    const s = this.slots;
    for (let i = Atomics.load(this.header, 2); i < written; i++) {
      const at = (i % CAPACITY) * SLOTS;
      const args: TraceArgs = { op: KINDS[s[at + 4]], bytes: s[at + 5], algorithm: ALGORITHMS[s[at + 8]], seq: s[at + 6], group: s[at + 7], dtype: DTYPES[s[at + 10]] };
      if (s[at + 9] >= 0) args.reduceOp = REDUCE_OPS[s[at + 9]];
      if (s[at + 13] === 1) args.failed = true;
      if (s[at + 17] >= 0) args.peer = s[at + 17];
      const pipeline = s[at + 14] >= 0 ? { what: PIPELINE_MESSAGES[s[at + 14]]!, mb: s[at + 15], boundary: s[at + 16] } : undefined;
      emitCollective(emit, [s[at], s[at + 1], s[at + 2], s[at + 3]], args, { bucket: s[at + 11], params: s[at + 12], pipeline });
    }
    Atomics.store(this.header, 2, written);
    const dropped = Atomics.exchange(this.header, 3, 0);
    if (dropped > 0) emit.instant(TID_COMM, `${dropped} collective span(s) dropped: the trace writer fell behind`, s[((written - 1 + CAPACITY) % CAPACITY) * SLOTS + 3]);
  }
}

/** A collective run on the training thread (InlineRunner) goes straight to the recorder. */
export function emitInline(emit: TraceRecorder, r: CollectiveRecord): void {
  const req = r.msg.req as Request & { op?: ReduceOpName };
  const args: TraceArgs = { op: req.kind, bytes: requestBytes(req, r.msg.dtype), algorithm: r.algorithm, seq: r.msg.seq, group: r.msg.group, dtype: r.msg.dtype, inline: true };
  if (req.op !== undefined) args.reduceOp = req.op;
  if (r.failed) args.failed = true;
  if ("peer" in req) args.peer = req.peer;
  emitCollective(emit, [r.outerStart, r.start, r.end, r.outerEnd], args, r.msg.trace ?? {});
}

/**
 * A DDP bucket's span encloses its collective's (bucket -1: every bucket in one reduction). A
 * pipeline's send or receive is named for what it carries ("send activation", "recv gradient"),
 * with the micro-batch and the stage boundary (after stage `boundary`) as args, and when the comm
 * thread took it up (postedUs, the record's outer start).
 */
function emitCollective(emit: TraceRecorder, t: number[], args: TraceArgs, tag: CommTraceTag): void {
  const bucket = tag.bucket ?? NaN;
  if (!Number.isNaN(bucket)) {
    const name = bucket < 0 ? "DDP buckets (all, after backward)" : `DDP bucket ${bucket}`;
    emit.span(TID_COMM, name, t[0], t[3], { bucket, params: tag.params ?? 0, bytes: args.bytes });
  }
  if (tag.pipeline) {
    const { what, mb, boundary } = tag.pipeline;
    // postedUs: when the comm thread took it up (the span starts later if an earlier one ended later).
    emit.span(TID_COMM, `${String(args.op)} ${what}`, t[1], t[2], { ...args, message: what, mb, boundary, postedUs: t[0] });
  } else emit.span(TID_COMM, String(args.op), t[1], t[2], args);
}

/** Bytes of the tensor(s) the collective reduces or moves on this rank (allGather: its output; reduceScatter: its input). */
export function requestBytes(req: Request, dtype: CommDType): number {
  const e = DTYPE_BYTES[dtype];
  const sum = (bufs: readonly { numel: number }[] | null) => (bufs ?? []).reduce((n, b) => n + b.numel, 0);
  switch (req.kind) {
    case "allReduce":
      return sum(req.bufs) * e;
    case "broadcast":
    case "reduce":
    case "send":
    case "recv":
      return req.buf.numel * e;
    case "allGather":
      return sum(req.outputs) * e;
    case "reduceScatter":
      return sum(req.inputs) * e;
    case "scatter":
      return (req.inputs ? sum(req.inputs) : req.output.numel) * e;
    case "gather":
      return (req.outputs ? sum(req.outputs) : req.input.numel) * e;
    case "allToAll":
      return sum(req.inputs) * e;
    case "barrier":
      return 0;
  }
}
