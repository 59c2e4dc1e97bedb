import type { Module } from "../../nn/module.js";
import type { Tensor } from "../../tensor/tensor.js";
import { formatShape } from "../../tensor/shape.js";
import { checkOptions } from "../../util/options.js";
import { currentWorld } from "../init.js";
import { irecv, isend } from "../point_to_point.js";
import { MessageBuffers } from "./message_buffers.js";
import { frameBody, frameNumel, MAX_DIMS, writeFrameShape } from "./activation_frame.js";
import { tagged } from "./trace.js";
import type { ProcessGroup } from "../process_group.js";
import type { Work } from "../work.js";

export interface PipelineStageOptions {
  /** The ranks that run the pipeline; stage s runs on group rank s mod (group size) (default: the whole job). */
  group?: ProcessGroup;
  /**
   * The shape of one sample this stage takes, without the batch dimension (torch's input_args).
   * When given, the previous stage checks its output against it and both ranks report a
   * mismatch naming the two ranks and shapes, instead of this stage failing inside its forward.
   */
  inputShape?: readonly number[];
  /** Timeout of every send and receive of the stage (default: the process group's). */
  timeoutMs?: number;
}

/**
 * Tags of the messages across the boundary after stage s, 4 per boundary. Messages between two
 * ranks arrive in the order they were sent whatever their tags; a receive checks the tag of what
 * arrives, so a receive posted out of order is reported, never filled with another message's data.
 */
export const tagOf = (boundary: number, kind: 0 | 1 | 2 | 3): number => boundary * 4 + kind;
export const HEADER = 0;
export const ACTIVATION = 1;
export const GRADIENT = 2;
const SPEC = 3;

/**
 * One stage of a pipeline (torch.distributed.pipelining.PipelineStage): its module, and how its
 * messages cross its two boundaries. Stages sit on the group's ranks in a loop: stage s on group
 * rank s mod (group size), so that a pipeline of v·p stages gives each of p ranks v stages (the
 * interleaved schedule's virtual stages); with p stages, one each. An activation travels as one
 * message with its shape in front (activation_frame.ts: micro-batches may differ in size); in a
 * stage's first step, when the receiver cannot know its size, a header message with the shape goes
 * first. Gradients need no shape, since the sender of an activation knows the shape of the
 * gradient that will come back. Receives are posted by the schedule (inbox.ts), which knows every
 * rank's order.
 */
export class PipelineStage {
  readonly group: ProcessGroup;
  /** Global ranks of this stage and its neighbours (-1 where there is none). */
  readonly rank: number;
  readonly prevRank: number;
  readonly nextRank: number;
  readonly timeoutMs: number | undefined;
  /** The buffers this stage's activations and gradients travel in, reused every step (message_buffers.ts). */
  readonly buffers = new MessageBuffers();
  private readonly declaredInput: readonly number[] | null;
  /** What the next stage declared it takes per sample; undefined until the handshake. */
  private nextExpects: readonly number[] | null | undefined;
  /**
   * The shape of the last activation of each micro-batch sent to the next stage, and received from
   * the previous one. Both ranks of a boundary keep the same record, so that the receiver posts an
   * activation's receive at the size it had last step (inbox.ts), and the activation needs no
   * header message: one transfer, with no hand-off through the receiver's training thread. A
   * micro-batch whose shape changed is sent once at the old size (a placeholder whose frame gives
   * the new shape, discarded) and again at the new one.
   */
  private readonly sentShapes = new Map<number, readonly number[]>();
  readonly receivedShapes = new Map<number, readonly number[]>();

  constructor(
    readonly submodule: Module,
    readonly stageIndex: number,
    readonly numStages: number,
    opts: PipelineStageOptions = {},
  ) {
    checkOptions("PipelineStage", opts, ["group", "inputShape", "timeoutMs"]);
    if (!Number.isInteger(numStages) || numStages < 1) throw new RangeError(`PipelineStage: numStages must be a positive integer, got ${numStages}`);
    if (!Number.isInteger(stageIndex) || stageIndex < 0 || stageIndex >= numStages) {
      throw new RangeError(`PipelineStage: stageIndex must be in 0..${numStages - 1}, got ${stageIndex}`);
    }
    this.group = opts.group ?? currentWorld("PipelineStage").world;
    const p = this.group.size;
    if (numStages % p !== 0) {
      throw new Error(`PipelineStage: ${numStages} stages do not go evenly on a group of ${p} ranks; use one stage per rank, or the same number of stages on every rank`);
    }
    const me = this.group.rank;
    if (me !== stageIndex % p) {
      throw new Error(
        `PipelineStage: stage ${stageIndex} runs on group rank ${stageIndex % p} (stage s on rank s mod ${p}), but this process is group rank ${me} (global rank ${currentWorld("PipelineStage").runtime.rank})`,
      );
    }
    this.rank = this.rankOfStage(stageIndex);
    this.prevRank = stageIndex > 0 ? this.rankOfStage(stageIndex - 1) : -1;
    this.nextRank = stageIndex < numStages - 1 ? this.rankOfStage(stageIndex + 1) : -1;
    this.timeoutMs = opts.timeoutMs;
    this.declaredInput = opts.inputShape ? [...opts.inputShape] : null;
  }

  get isFirst(): boolean {
    return this.stageIndex === 0;
  }

  get isLast(): boolean {
    return this.stageIndex === this.numStages - 1;
  }

  /** The global rank that runs stage `s` of this pipeline. */
  rankOfStage(s: number): number {
    return this.group.ranks[s % this.group.size]!;
  }

  /** Options of the point-to-point messages across the boundary after stage `boundary`. */
  p2p(boundary: number, kind: 0 | 1 | 2 | 3) {
    return { group: this.group, tag: tagOf(boundary, kind), timeoutMs: this.timeoutMs };
  }

  /**
   * Once per stage, in two halves so that a rank with several stages posts every send before it
   * waits: tells the previous stage what this one takes per sample, then learns what the next one
   * takes, so that a mismatch is reported by both ranks of the boundary.
   */
  handshakeSend(): Work | null {
    if (this.nextExpects !== undefined || this.isFirst) return null;
    return isend(encodeShape(this.declaredInput ?? null), this.prevRank, this.p2p(this.stageIndex - 1, SPEC));
  }

  handshakeReceive(): void {
    if (this.nextExpects !== undefined) return;
    if (this.isLast) {
      this.nextExpects = null;
      return;
    }
    const got = new Int32Array(new SharedArrayBuffer(4 * (MAX_DIMS + 1)));
    irecv(got, this.nextRank, this.p2p(this.stageIndex, SPEC)).wait();
    this.nextExpects = decodeShape(got);
  }

  /** Sends micro-batch `mb`'s output to the next stage; the Works finish when it is handed over. */
  sendActivation(out: Tensor, mb = -1): Work[] {
    const predicted = this.sentShapes.get(mb);
    if (this.nextExpects) {
      try {
        this.checkBoundary(this.stageIndex, out.shape, this.nextExpects, this.rank, this.nextRank);
      } catch (error) {
        // The shape still goes, so that the next rank reports the same mismatch rather than waiting.
        (predicted ? this.sendFrame(out.shape, predicted, null, out.dtype, mb) : this.sendHeader(out.shape, mb)).wait();
        throw error;
      }
    }
    const works: Work[] = [];
    // Without a record the receiver cannot know the size: the shape goes ahead on its own.
    if (!predicted) works.push(this.sendHeader(out.shape, mb));
    // The receiver has posted a receive of the size this micro-batch had last step: fill it with a frame that gives the new shape.
    else if (!sameShape(predicted, out.shape)) works.push(this.sendFrame(out.shape, predicted, null, out.dtype, mb));
    this.sentShapes.set(mb, [...out.shape]);
    works.push(this.sendFrame(out.shape, out.shape, out, out.dtype, mb));
    return works;
  }

  private sendHeader(shape: readonly number[], mb: number): Work {
    return tagged("header", mb, this.stageIndex, () => isend(encodeShape(shape), this.nextRank, this.p2p(this.stageIndex, HEADER)));
  }

  /** A frame announcing `shape`, of the size of `sizeOf`, carrying `values` (none: a placeholder). */
  private sendFrame(shape: readonly number[], sizeOf: readonly number[], values: Tensor | null, dtype: Tensor["dtype"], mb: number): Work {
    const frame = this.buffers.take([frameNumel(sizeOf, dtype)], dtype);
    writeFrameShape(frame, shape);
    if (values) frameBody(frame, shape).copy_(values.detach());
    const work = tagged("activation", mb, this.stageIndex, () => isend(frame, this.nextRank, this.p2p(this.stageIndex, ACTIVATION)));
    return this.buffers.sent(work, frame);
  }

  /** Sends the gradient of micro-batch `mb`'s input back to the previous stage. */
  sendGradient(grad: Tensor, mb = -1): Work {
    return tagged("gradient", mb, this.stageIndex - 1, () => this.buffers.send(grad, (b) => isend(b, this.prevRank, this.p2p(this.stageIndex - 1, GRADIENT))));
  }

  /** Checks an incoming activation's shape against what this stage declared (inputShape). */
  checkIncoming(shape: readonly number[]): void {
    if (this.declaredInput) this.checkBoundary(this.stageIndex - 1, shape, this.declaredInput, this.prevRank, this.rank);
  }

  /** Both ranks of a boundary throw the same sentence when the activations do not fit. */
  private checkBoundary(boundary: number, shape: readonly number[], expected: readonly number[], from: number, to: number): void {
    const sample = shape.slice(1);
    if (sample.length === expected.length && sample.every((d, i) => d === expected[i])) return;
    throw new Error(
      `pipeline: the activations from stage ${boundary} (rank ${from}) to stage ${boundary + 1} (rank ${to}) disagree: ` +
        `rank ${from} sends ${formatShape(shape)} (per sample ${formatShape(sample)}), rank ${to} takes per sample ${formatShape(expected)}`,
    );
  }
}

export const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** A shape header's memory (filled by a receive). */
export function headerBuffer(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * (MAX_DIMS + 1)));
}

/** [ndim, d0, …]; ndim -1 for "not declared". */
function encodeShape(shape: readonly number[] | null): Int32Array {
  if (shape && shape.length > MAX_DIMS) throw new Error(`pipeline: activations have at most ${MAX_DIMS} dimensions, got ${formatShape(shape)}`);
  const out = headerBuffer();
  out[0] = shape ? shape.length : -1;
  shape?.forEach((d, i) => (out[i + 1] = d));
  return out;
}

export function decodeShape(h: Int32Array): number[] | null {
  return h[0]! < 0 ? null : Array.from(h.subarray(1, 1 + h[0]!));
}
