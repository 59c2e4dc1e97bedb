import type { Module } from "../../nn/module.js";
import { empty } from "../../ops/creation.js";
import { contiguous } from "../../ops/view.js";
import type { Tensor } from "../../tensor/tensor.js";
import { formatShape } from "../../tensor/shape.js";
import { checkOptions } from "../../util/options.js";
import { currentWorld } from "../init.js";
import { irecv, isend } from "../point_to_point.js";
import type { ProcessGroup } from "../process_group.js";
import type { Work } from "../work.js";

export interface PipelineStageOptions {
  /** The ranks that run the pipeline; stage i runs on group rank i (default: the whole job). */
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

const MAX_DIMS = 8;
/** Tags of the messages across the boundary after stage s: 4 per boundary, so stages never mix. */
const tagOf = (boundary: number, kind: 0 | 1 | 2 | 3): number => boundary * 4 + kind;
const HEADER = 0;
const ACTIVATION = 1;
const GRADIENT = 2;
const SPEC = 3;

/** A receive in flight: its Work, and the tensor it fills. */
interface Pending<T> {
  work: Work;
  value: T;
}

/**
 * One stage of a pipeline on this rank (torch.distributed.pipelining.PipelineStage): its module,
 * and the messages across its two boundaries. Activations travel with a small header giving their
 * shape (micro-batches may differ in size); gradients need none, since the sender of an activation
 * knows the shape of the gradient that will come back.
 */
export class PipelineStage {
  readonly group: ProcessGroup;
  /** Global ranks of this stage and its neighbours (-1 where there is none). */
  readonly rank: number;
  readonly prevRank: number;
  readonly nextRank: number;
  private readonly timeoutMs: number | undefined;
  private readonly declaredInput: readonly number[] | null;
  /** What the next stage declared it takes per sample; undefined until the handshake. */
  private nextExpects: readonly number[] | null | undefined;
  private readonly headers = new Map<number, Pending<Int32Array>>();
  private readonly activations = new Map<number, Pending<Tensor>>();
  private readonly gradients = new Map<number, Pending<Tensor>>();
  private stepMicrobatches = 0;
  private nextActivation = 0;

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
    if (this.group.size !== numStages) {
      throw new Error(`PipelineStage: ${numStages} stages need a group of ${numStages} ranks (one stage per rank), but the group has ${this.group.size}`);
    }
    const me = this.group.rank;
    if (me !== stageIndex) {
      throw new Error(`PipelineStage: stage ${stageIndex} runs on group rank ${stageIndex}, but this process is group rank ${me} (global rank ${currentWorld("PipelineStage").runtime.rank})`);
    }
    this.rank = this.group.ranks[stageIndex]!;
    this.prevRank = stageIndex > 0 ? this.group.ranks[stageIndex - 1]! : -1;
    this.nextRank = stageIndex < numStages - 1 ? this.group.ranks[stageIndex + 1]! : -1;
    this.timeoutMs = opts.timeoutMs;
    this.declaredInput = opts.inputShape ? [...opts.inputShape] : null;
  }

  get isFirst(): boolean {
    return this.stageIndex === 0;
  }

  get isLast(): boolean {
    return this.stageIndex === this.numStages - 1;
  }

  private p2p(boundary: number, kind: 0 | 1 | 2 | 3) {
    return { group: this.group, tag: tagOf(boundary, kind), timeoutMs: this.timeoutMs };
  }

  /**
   * Once per stage: tells the previous stage what this one takes per sample, and learns what the
   * next one takes, so that a mismatch is reported by both ranks of the boundary.
   */
  handshake(): void {
    if (this.nextExpects !== undefined) return;
    const sent = this.isFirst ? null : encodeShape(this.declaredInput ?? null);
    const works: Work[] = [];
    if (sent) works.push(isend(sent, this.prevRank, this.p2p(this.stageIndex - 1, SPEC)));
    if (!this.isLast) {
      const got = new Int32Array(new SharedArrayBuffer(4 * (MAX_DIMS + 1)));
      irecv(got, this.nextRank, this.p2p(this.stageIndex, SPEC)).wait();
      this.nextExpects = decodeShape(got);
    } else this.nextExpects = null;
    for (const w of works) w.wait();
  }

  /** Sends micro-batch `mb`'s output to the next stage; the Works finish when it is handed over. */
  sendActivation(mb: number, out: Tensor): Work[] {
    const header = isend(encodeShape(out.shape), this.nextRank, this.p2p(this.stageIndex, HEADER));
    if (this.nextExpects) {
      try {
        this.checkBoundary(this.stageIndex, out.shape, this.nextExpects, this.rank, this.nextRank);
      } catch (error) {
        // The header still goes, so that the next rank reports the same mismatch rather than waiting.
        header.wait();
        throw error;
      }
    }
    return [header, isend(contiguous(out.detach()), this.nextRank, this.p2p(this.stageIndex, ACTIVATION))];
  }

  /**
   * Starts a step of `m` micro-batches. Messages between two ranks match in the order they were
   * posted, so the receives go in the order the previous stage sends: header 0, activation 0,
   * header 1, … An activation's receive can be posted only once its header is in (it gives the
   * size); pump() posts as far as that allows without blocking, so transfers overlap compute.
   */
  beginStep(m: number): void {
    this.stepMicrobatches = m;
    this.nextActivation = 0;
    this.headers.clear();
    this.activations.clear();
    this.gradients.clear();
    if (!this.isFirst) this.pump(-1);
  }

  /** Posts receives ahead; blocks only for the headers of micro-batches up to `needed`. */
  pump(needed: number): void {
    while (this.nextActivation < this.stepMicrobatches) {
      const k = this.nextActivation;
      let header = this.headers.get(k);
      if (!header) {
        const value = new Int32Array(new SharedArrayBuffer(4 * (MAX_DIMS + 1)));
        header = { work: irecv(value, this.prevRank, this.p2p(this.stageIndex - 1, HEADER)), value };
        this.headers.set(k, header);
      }
      if (!header.work.isCompleted() && k > needed) return;
      header.work.wait();
      this.headers.delete(k);
      const shape = decodeShape(header.value)!;
      if (this.declaredInput) this.checkBoundary(this.stageIndex - 1, shape, this.declaredInput, this.prevRank, this.rank);
      const value = empty(shape);
      this.activations.set(k, { work: irecv(value, this.prevRank, this.p2p(this.stageIndex - 1, ACTIVATION)), value });
      this.nextActivation++;
    }
  }

  /** Micro-batch `mb`'s input from the previous stage, as a leaf that collects its gradient. */
  recvActivation(mb: number): Tensor {
    this.pump(mb);
    const pending = this.activations.get(mb);
    if (!pending) throw new Error(`internal: stage ${this.stageIndex} has no receive for micro-batch ${mb}`);
    pending.work.wait();
    this.activations.delete(mb);
    return pending.value.requiresGrad_(true);
  }

  /** Posts the receive of d(loss)/d(output) for micro-batch `mb` as soon as the output is sent. */
  postGradient(mb: number, shape: readonly number[]): void {
    const value = empty(shape);
    this.gradients.set(mb, { work: irecv(value, this.nextRank, this.p2p(this.stageIndex, GRADIENT)), value });
  }

  recvGradient(mb: number): Tensor {
    const pending = this.gradients.get(mb);
    if (!pending) throw new Error(`internal: stage ${this.stageIndex} waits for the gradient of micro-batch ${mb} without having posted its receive`);
    pending.work.wait();
    this.gradients.delete(mb);
    return pending.value;
  }

  sendGradient(grad: Tensor): Work {
    return isend(contiguous(grad), this.prevRank, this.p2p(this.stageIndex - 1, GRADIENT));
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

/** [ndim, d0, …]; ndim -1 for "not declared". */
function encodeShape(shape: readonly number[] | null): Int32Array {
  if (shape && shape.length > MAX_DIMS) throw new Error(`pipeline: activations have at most ${MAX_DIMS} dimensions, got ${formatShape(shape)}`);
  const out = new Int32Array(new SharedArrayBuffer(4 * (MAX_DIMS + 1)));
  out[0] = shape ? shape.length : -1;
  shape?.forEach((d, i) => (out[i + 1] = d));
  return out;
}

function decodeShape(h: Int32Array): number[] | null {
  return h[0]! < 0 ? null : Array.from(h.subarray(1, 1 + h[0]!));
}
