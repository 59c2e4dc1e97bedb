import type { CommNative } from "../native.js";
import { MAX_TCP_STREAMS, TransferStatus } from "../native.js";
import type { TypedArray } from "../dtypes.js";
import { type Piece, type Span, totalBytes } from "./piece.js";

/**
 * Numbers per transfer in the descriptor native/comm/register.cc (CommRun) reads: 15 set here,
 * then one progress counter per TCP stream that native code keeps for a message it cut into
 * parts (native/comm/stripe.cc).
 */
const FIELDS = 15 + MAX_TCP_STREAMS;

/** A failed batch of transfers: the native status and its explanation. */
export class TransferError extends Error {
  constructor(
    readonly status: TransferStatus,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "TransferError";
  }
}

/**
 * Collects the sends and receives of one algorithm step and runs them together in native code
 * (native/comm/engine.cc). Ranks are global; every message carries the current tag and code.
 */
export class Link {
  private desc = new Float64Array(FIELDS * 16);
  private bufs: TypedArray[] = [];
  private count = 0;
  /** (buffer index, byte offset, bytes) of each piece of the batch's scattered messages. */
  private segments = new Float64Array(3 * 16);
  private segmentCount = 0;
  tag = 0;
  code = 0;
  /** performance.now() time by which the current operation must finish. */
  deadline = Infinity;
  /**
   * Called each time a flush has waited `stallMs` without progress, between native calls: the
   * op loop then publishes that this rank is in the collective (see OpLoop.publishMarks).
   */
  onStall: (() => void) | null = null;
  stallMs = 500;

  constructor(
    private readonly native: CommNative,
    readonly handle: number,
  ) {}

  send(peer: number, p: Piece | Span): this {
    return this.add(peer, 0, p, null, 0, 0);
  }

  /**
   * Sends `p` as the receive added `gate`-th in this batch (counting from 0) fills it: for
   * forwarding reduced data on while it is still in cache.
   */
  sendGated(peer: number, p: Piece | Span, gate: number): this {
    this.add(peer, 0, p, null, 0, 0);
    this.desc[(this.count - 1) * FIELDS + 12] = gate;
    return this;
  }

  /** Index the next transfer added to the batch will have. */
  get nextIndex(): number {
    return this.count;
  }

  recv(peer: number, p: Piece | Span): this {
    return this.add(peer, 1, p, null, 0, 0);
  }

  /**
   * Receives into `p` the incoming data reduced with `local` (by default `p` itself), divided by
   * `divisor` when this reduction completes an average.
   */
  recvReduce(peer: number, p: Piece | Span, dtype: number, op: number, local: Piece | null = null, divisor = 1): this {
    this.add(peer, 2, p, local, dtype, op);
    this.desc[(this.count - 1) * FIELDS + 13] = divisor;
    return this;
  }

  get pending(): number {
    return this.count;
  }

  /** Runs the batch to completion; throws TransferError. */
  flush(): void {
    while (this.runBatch(this.stallMs) === TransferStatus.Stalled) this.onStall?.();
  }

  /**
   * Runs the batch until done, or until nothing moved for `stallMs` (then returns Stalled and
   * keeps the batch so that more transfers can join it). With `wakeSeen` (CommNative.posted) it
   * also returns Stalled when the main thread posts more or a transfer finishes. Other failures throw.
   */
  runBatch(stallMs: number, wakeSeen?: number): TransferStatus {
    if (this.count === 0) return TransferStatus.Ok;
    const left = Math.max(0, Math.ceil(this.deadline - performance.now()));
    const timeoutMs = Number.isFinite(left) ? Math.min(left, 2 ** 31 - 1) : 2 ** 31 - 1;
    const segments = this.segmentCount > 0 ? this.segments : undefined;
    const status = this.native.run(this.handle, this.desc, this.count, this.bufs, timeoutMs, stallMs, segments, wakeSeen);
    if (status === TransferStatus.Stalled) return status;
    this.clear();
    if (status !== TransferStatus.Ok) throw new TransferError(status, this.native.lastError(this.handle));
    return status;
  }

  /** Whether transfer i of the current (stalled) batch has finished. */
  isDone(i: number): boolean {
    return this.desc[i * FIELDS + 11]! >= this.desc[i * FIELDS + 4]! + 16;
  }

  clear(): void {
    this.count = 0;
    this.bufs.length = 0;
    this.segmentCount = 0;
  }

  private add(peer: number, kind: number, target: Piece | Span, local: Piece | null, dtype: number, op: number): this {
    this.desc = grownTo(this.desc, (this.count + 1) * FIELDS);
    const d = this.desc;
    const o = this.count * FIELDS;
    const one = isSpan(target) ? (target.length === 1 ? target[0]! : null) : target;
    // A single piece in a typed array travels as it always has; anything else as segments.
    const p = one && one.buf ? (one as Piece & { buf: TypedArray }) : null;
    d[o] = peer;
    d[o + 1] = kind;
    if (p) {
      d[o + 2] = this.bufIndex(p.buf);
      d[o + 3] = p.byteOffset;
      d[o + 4] = p.bytes;
      d[o + 14] = 0;
    } else {
      const pieces = isSpan(target) ? target : [target];
      d[o + 2] = this.segmentCount;
      d[o + 3] = 0;
      d[o + 4] = totalBytes(pieces);
      d[o + 14] = pieces.length;
      this.addSegments(pieces);
    }
    d[o + 5] = local ? this.bufIndex(local.buf!) : -1;
    d[o + 6] = local ? local.byteOffset : 0;
    d[o + 7] = dtype;
    d[o + 8] = op;
    d[o + 9] = this.tag >>> 0;
    d[o + 10] = this.code >>> 0;
    d[o + 11] = 0;
    d[o + 12] = -1;
    d[o + 13] = 1;
    d.fill(0, o + 15, o + FIELDS);
    this.count++;
    return this;
  }

  private addSegments(pieces: Span): void {
    this.segments = grownTo(this.segments, (this.segmentCount + pieces.length) * 3);
    for (const q of pieces) {
      const at = this.segmentCount++ * 3;
      this.segments[at] = q.buf ? this.bufIndex(q.buf) : -1;
      this.segments[at + 1] = q.byteOffset;
      this.segments[at + 2] = q.bytes;
    }
  }

  private bufIndex(buf: TypedArray): number {
    const i = this.bufs.indexOf(buf);
    if (i >= 0) return i;
    this.bufs.push(buf);
    return this.bufs.length - 1;
  }
}

function isSpan(p: Piece | Span): p is Span {
  return Array.isArray(p);
}

function grownTo(a: Float64Array<ArrayBuffer>, length: number): Float64Array<ArrayBuffer> {
  if (a.length >= length) return a;
  const grown = new Float64Array(Math.max(length, a.length * 2));
  grown.set(a);
  return grown;
}
