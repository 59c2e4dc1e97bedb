import { performance } from "node:perf_hooks";
import { cat, split } from "../../ops/join.js";
import { mul } from "../../ops/elementwise.js";
import { memoryPool } from "../../tensor/storage.js";
import { Tensor } from "../../tensor/tensor.js";
import { formatShape } from "../../tensor/shape.js";
import { checkArity, checkOptions } from "../../util/options.js";
import type { Work } from "../work.js";
import { type Action, gpipeOrder, idealBubbleFraction, oneFOneBOrder } from "./schedule_orders.js";
import type { PipelineStage } from "./stage.js";

export interface ScheduleOptions {
  /** Micro-batches per step; the batch need not divide evenly (sizes differ by at most one, as torch.tensor_split). */
  nMicrobatches: number;
  /** The loss of one micro-batch, on the last stage: (output, target) => scalar. */
  lossFn: (output: Tensor, target: Tensor) => Tensor;
  /**
   * How micro-batch losses make the step's gradient, said out loud (torch divides by the number of
   * micro-batches silently):
   * - "mean": each micro-batch's loss is weighted by its share of the batch (size / batch size)
   *   before backward, so a mean-reduced lossFn gives the gradient of the whole batch's mean loss,
   *   also when the micro-batches differ in size;
   * - "sum": each micro-batch's loss is backpropagated as it is: with a sum-reduced lossFn, the
   *   gradient of the whole batch's summed loss.
   */
  lossScaling: "mean" | "sum";
}

export interface StepOptions {
  /** The batch (first stage only). */
  input?: Tensor;
  /** The targets of the batch (last stage only). */
  target?: Tensor;
  /** Receives each micro-batch's loss, unscaled, detached (last stage only). */
  losses?: Tensor[];
}

/** What one step did on this stage, from the schedule's own clock (milliseconds). */
export interface StepTimeline {
  readonly actions: readonly { kind: "F" | "B"; mb: number; start: number; end: number; waitMs: number; heldBytes: number | null }[];
  readonly totalMs: number;
  /** 1 - (time computing) / (step time): waiting for peers and messages is the bubble. */
  readonly bubbleFraction: number;
  /** The most micro-batches whose activations (graph and saved tensors) this stage held at once, counted as the step ran. */
  readonly peakMicrobatches: number;
}

interface Saved {
  input: Tensor;
  /** The output (middle stages) or the scaled loss (last stage) that backward starts from. */
  root: Tensor;
}

/**
 * A pipeline schedule over one stage per rank (torch.distributed.pipelining's PipelineScheduleSingle).
 * `step()` runs one batch: forwards and backwards of every micro-batch in the schedule's order,
 * sending activations and gradients with isend/irecv so that transfers overlap compute (receives
 * are posted before they are needed, sends are waited for only at the end of the step). Gradients
 * accumulate into the parameters' .grad; zero them between steps as usual.
 */
export abstract class PipelineSchedule {
  lastTimeline: StepTimeline | null = null;
  protected readonly nMicrobatches: number;
  private readonly lossFn: ScheduleOptions["lossFn"];
  private readonly lossScaling: ScheduleOptions["lossScaling"];

  constructor(
    readonly stage: PipelineStage,
    opts: ScheduleOptions,
  ) {
    checkArity(this.constructor.name, arguments, 2, `new ${this.constructor.name}(stage, { nMicrobatches, lossFn, lossScaling })`);
    checkOptions(this.constructor.name, opts, ["nMicrobatches", "lossFn", "lossScaling"]);
    if (!Number.isInteger(opts?.nMicrobatches) || opts.nMicrobatches < 1) {
      throw new RangeError(`${this.constructor.name}: nMicrobatches must be a positive integer, got ${opts?.nMicrobatches}`);
    }
    if (typeof opts.lossFn !== "function") throw new TypeError(`${this.constructor.name}: lossFn must be a function (output, target) => scalar loss`);
    if (opts.lossScaling !== "mean" && opts.lossScaling !== "sum") {
      throw new TypeError(`${this.constructor.name}: lossScaling must be "mean" or "sum" (how micro-batch losses add up to the batch's), got ${JSON.stringify(opts.lossScaling)}`);
    }
    this.nMicrobatches = opts.nMicrobatches;
    this.lossFn = opts.lossFn;
    this.lossScaling = opts.lossScaling;
  }

  /** This stage's order of forwards and backwards. */
  order(): Action[] {
    return this.orderFor(this.stage.stageIndex, this.stage.numStages, this.nMicrobatches);
  }

  /** The schedule's bubble fraction with unit-time actions and free messages: (p-1)/(m+p-1) for GPipe and 1F1B. */
  idealBubbleFraction(): number {
    return idealBubbleFraction((s, p, m) => this.orderFor(s, p, m), this.stage.numStages, this.nMicrobatches);
  }

  protected abstract orderFor(stage: number, numStages: number, m: number): Action[];

  /**
   * Runs one batch. First stage: `step(input)` (or `step({ input })`); last stage:
   * `step({ target, losses })`, which returns the batch's output (the micro-batches' outputs
   * concatenated); stages between: `step()`.
   */
  step(arg?: Tensor | StepOptions): Tensor | undefined {
    checkArity("step", arguments, 1, "schedule.step(input) on the first stage, schedule.step({ target, losses }) on the last, schedule.step() between");
    const opts: StepOptions = arg instanceof Tensor ? { input: arg } : (arg ?? {});
    checkOptions("step", opts, ["input", "target", "losses"]);
    const stage = this.stage;
    const where = `step (stage ${stage.stageIndex} of ${stage.numStages}, rank ${stage.rank})`;
    const m = this.nMicrobatches;
    if (stage.isFirst !== (opts.input !== undefined)) throw new Error(`${where}: ${stage.isFirst ? "the first stage needs the batch: step(input)" : "only the first stage takes an input"}`);
    if (!stage.isLast && (opts.target !== undefined || opts.losses !== undefined)) throw new Error(`${where}: only the last stage takes target and losses`);
    if (stage.isLast && opts.target === undefined) throw new Error(`${where}: the last stage computes the loss and needs the targets: step({ target, losses })`);
    const inputs = opts.input ? splitBatch(opts.input, m, where, "input") : null;
    const targets = opts.target ? splitBatch(opts.target, m, where, "target") : null;
    const batch = opts.target?.shape[0] ?? 0;

    stage.handshake();
    const order = this.order();
    stage.beginStep(m);
    const saved = new Map<number, Saved>();
    const outputs: Tensor[] = [];
    const sends: Work[] = [];
    const timeline: { kind: "F" | "B"; mb: number; start: number; end: number; waitMs: number; heldBytes: number | null }[] = [];
    let peak = 0;
    const t0 = performance.now();
    order.forEach((action) => {
      const start = performance.now();
      let waitMs = 0;
      const waited = <T>(fn: () => T): T => {
        const w0 = performance.now();
        const r = fn();
        waitMs += performance.now() - w0;
        return r;
      };
      const { mb } = action;
      if (action.kind === "F") {
        const input = inputs ? inputs[mb]! : waited(() => stage.recvActivation(mb));
        const out = this.forward(input, where);
        if (stage.isLast) {
          if (targets![mb]!.shape[0] !== input.shape[0]) {
            throw new Error(`${where}: micro-batch ${mb} has ${input.shape[0]} samples but its targets ${targets![mb]!.shape[0]}; the target batch (${batch}) must match the input batch`);
          }
          const loss = this.lossFn(out, targets![mb]!);
          if (loss.numel !== 1) throw new Error(`${where}: lossFn must return a scalar, got shape ${formatShape(loss.shape)}`);
          opts.losses?.push(loss.detach());
          const scale = this.lossScaling === "mean" ? input.shape[0]! / batch : 1;
          saved.set(mb, { input, root: scale === 1 ? loss : mul(loss, scale) });
          outputs[mb] = out.detach();
        } else {
          sends.push(...waited(() => stage.sendActivation(mb, out)));
          stage.postGradient(mb, out.shape);
          saved.set(mb, { input, root: out });
        }
        peak = Math.max(peak, saved.size);
      } else {
        const { input, root } = saved.get(mb)!;
        saved.delete(mb);
        if (stage.isLast) root.backward();
        else root.backward(waited(() => stage.recvGradient(mb)));
        if (!stage.isFirst) {
          if (!input.grad) throw new Error(`${where}: the stage's output does not depend on its input, so no gradient can go back to stage ${stage.stageIndex - 1}`);
          sends.push(stage.sendGradient(input.grad));
        }
      }
      // Start receiving the next forwards' activations while this rank still has work.
      if (!stage.isFirst) stage.pump(-1);
      timeline.push({ kind: action.kind, mb, start: start - t0, end: performance.now() - t0, waitMs, heldBytes: memoryPool.stats()?.held ?? null });
    });
    for (const w of sends) w.wait();
    const totalMs = performance.now() - t0;
    const busy = timeline.reduce((s, a) => s + (a.end - a.start - a.waitMs), 0);
    this.lastTimeline = { actions: timeline, totalMs, bubbleFraction: 1 - busy / Math.max(totalMs, 1e-9), peakMicrobatches: peak };
    return stage.isLast ? cat(outputs, 0) : undefined;
  }

  /** The stage's forward; on a stage that received its input, a failure says from where and what shape. */
  private forward(input: Tensor, where: string): Tensor {
    const stage = this.stage;
    try {
      return stage.submodule.call(input) as Tensor;
    } catch (error) {
      if (stage.isFirst) throw error;
      (error as Error).message =
        `${where}: the forward failed on activations of shape ${formatShape(input.shape)} received from stage ${stage.stageIndex - 1} (rank ${stage.prevRank}): ${(error as Error).message}`;
      throw error;
    }
  }
}

/** Micro-batches as torch.tensor_split cuts them: sizes differ by at most one, the larger first. */
export function splitBatch(batch: Tensor, m: number, where: string, what: string): Tensor[] {
  const n = batch.shape[0];
  if (n === undefined) throw new Error(`${where}: the ${what} must have a batch dimension, got a scalar`);
  if (m > n) throw new Error(`${where}: ${m} micro-batches need at least ${m} samples, but the ${what} batch has ${n}; lower nMicrobatches`);
  const sizes = Array.from({ length: m }, (_, i) => Math.floor(n / m) + (i < n % m ? 1 : 0));
  return split(batch, sizes, 0);
}

/** GPipe: all forwards, then all backwards (torch.distributed.pipelining.ScheduleGPipe). */
export class ScheduleGPipe extends PipelineSchedule {
  protected orderFor(s: number, p: number, m: number): Action[] {
    return gpipeOrder(s, p, m);
  }
}

/** 1F1B: warm-up forwards, then one forward one backward (torch.distributed.pipelining.Schedule1F1B). */
export class Schedule1F1B extends PipelineSchedule {
  protected orderFor(s: number, p: number, m: number): Action[] {
    return oneFOneBOrder(s, p, m);
  }
}
