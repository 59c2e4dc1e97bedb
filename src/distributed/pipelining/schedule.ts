import { performance } from "node:perf_hooks";
import { cat, split } from "../../ops/join.js";
import { mul } from "../../ops/elementwise.js";
import { runBackward, runDeferredLeafGradients } from "../../autograd/engine.js";
import { memoryPool } from "../../tensor/storage.js";
import { Tensor } from "../../tensor/tensor.js";
import { formatShape } from "../../tensor/shape.js";
import { checkArity, checkOptions } from "../../util/options.js";
import type { Work } from "../work.js";
import { Inbox } from "./inbox.js";
import { type Action, gpipeOrder, idealBubbleFraction, oneFOneBOrder } from "./schedule_orders.js";
import { PipelineStage } from "./stage.js";
import { spanned } from "./trace.js";
import { TID_TRAIN, traceNow, traceSpan, tracing } from "../../util/trace.js";

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
  /**
   * Called after each action of a step, between actions, with the action as it ran: for probes
   * that look at the rank between actions (the tests collect garbage here and read the tensor
   * pool's held bytes). Its time counts in the step's, not in the action's.
   */
  afterAction?: (action: TimedAction) => void;
  /**
   * Whether a stage's backward computes its input's gradient first, sends it, and only then its
   * weights' gradients (default true): the previous stage, which waits for that gradient, then
   * waits for about half a backward less (the zero-bubble pipelines' split of B into B and W, kept
   * inside one action). Gradients come out the same; false runs each backward whole, as before.
   * Only Linear layers defer their weight gradients, and not for parameters with gradient hooks
   * (a DDP or FSDP stage module computes them in the pass, as before).
   */
  inputGradientFirst?: boolean;
}

export interface StepOptions {
  /** The batch (first stage only). */
  input?: Tensor;
  /** The targets of the batch (last stage only). */
  target?: Tensor;
  /** Receives each micro-batch's loss, unscaled, detached (last stage only). */
  losses?: Tensor[];
}

/** One action as it ran on this rank, from the schedule's own clock (milliseconds). */
export interface TimedAction {
  kind: "F" | "B";
  mb: number;
  stage: number;
  start: number;
  end: number;
  waitMs: number;
  /** When its wait for a peer's message began (null: it had its input at hand), on the same clock. */
  waitStart: number | null;
  /** When its message to a peer (activation or gradient) was handed to isend (null: it sent none). */
  sentAt: number | null;
  heldBytes: number | null;
}

/** What one step did on this rank, from the schedule's own clock (milliseconds). */
export interface StepTimeline {
  readonly actions: readonly TimedAction[];
  /**
   * The step's start on the host's common clock (performance.timeOrigin + performance.now(), ms):
   * the ranks of one host share it, so their timelines line up (bench/pipeline_idle.ts does).
   */
  readonly origin: number;
  readonly totalMs: number;
  /**
   * 1 - (time computing) / (step time), on this rank's own clock: the step from its entry into
   * step() to its last send handed over; waiting for peers and messages is the bubble. Over the
   * pipeline's step (a common start to the end of the last rank's last action) each rank of a
   * balanced pipeline idles (p-1)/(m+p-1) of it; this rank's own window leaves out the idle time
   * after it finished (the last stage ends before the first) and bench/pipeline.ts reports both.
   */
  readonly bubbleFraction: number;
  /** The most micro-batches whose activations (graph and saved tensors) this rank held at once, over its stages, counted as the step ran. */
  readonly peakMicrobatches: number;
}

interface Saved {
  input: Tensor;
  /** The output (middle stages) or the scaled loss (last stage) that backward starts from. */
  root: Tensor;
}

/**
 * A stage module that averages its gradients over data-parallel replicas (DistributedDataParallel
 * is one). A schedule runs every micro-batch's forward under noSync() and calls
 * prepareForBackward() before the stage's last backward of the step, so the gradients of all the
 * micro-batches are averaged once, in that backward (what torch's pipelining does with DDP).
 */
interface GradSyncModule {
  noSync<T>(fn: () => T): T;
  prepareForBackward(): void;
}

function syncsGradients(m: unknown): m is GradSyncModule {
  return typeof (m as GradSyncModule).noSync === "function" && typeof (m as GradSyncModule).prepareForBackward === "function";
}

/**
 * A pipeline schedule over this rank's stages (one, or several for the interleaved schedule).
 * `step()` runs one batch: forwards and backwards of every micro-batch in the schedule's order,
 * sending activations and gradients with isend/irecv so that transfers overlap compute (receives
 * are posted ahead in the order each peer sends, sends are waited for only at the end of the
 * step). Gradients accumulate into the parameters' .grad; zero them between steps as usual.
 */
export abstract class PipelineScheduleBase {
  lastTimeline: StepTimeline | null = null;
  protected readonly nMicrobatches: number;
  private readonly lossFn: ScheduleOptions["lossFn"];
  private readonly lossScaling: ScheduleOptions["lossScaling"];
  private readonly afterAction: ScheduleOptions["afterAction"];
  private readonly inputGradientFirst: boolean;
  protected readonly stages: readonly PipelineStage[];

  constructor(stages: readonly PipelineStage[], opts: ScheduleOptions, usage: string) {
    const name = this.constructor.name;
    checkOptions(name, opts, ["nMicrobatches", "lossFn", "lossScaling", "afterAction", "inputGradientFirst"]);
    if (!Number.isInteger(opts?.nMicrobatches) || opts.nMicrobatches < 1) {
      throw new RangeError(`${name}: nMicrobatches must be a positive integer, got ${opts?.nMicrobatches}`);
    }
    if (typeof opts.lossFn !== "function") throw new TypeError(`${name}: lossFn must be a function (output, target) => scalar loss`);
    if (opts.lossScaling !== "mean" && opts.lossScaling !== "sum") {
      throw new TypeError(`${name}: lossScaling must be "mean" or "sum" (how micro-batch losses add up to the batch's), got ${JSON.stringify(opts.lossScaling)}`);
    }
    if (stages.length === 0 || !stages.every((st) => st instanceof PipelineStage)) throw new TypeError(`${name}: expected PipelineStage objects: ${usage}`);
    const { group, numStages } = stages[0]!;
    for (const st of stages) {
      if (st.group !== group || st.numStages !== numStages) throw new Error(`${name}: the stages must belong to one pipeline (the same group and number of stages)`);
    }
    this.stages = [...stages].sort((a, b) => a.stageIndex - b.stageIndex);
    this.nMicrobatches = opts.nMicrobatches;
    this.lossFn = opts.lossFn;
    this.lossScaling = opts.lossScaling;
    if (opts.afterAction !== undefined && typeof opts.afterAction !== "function") throw new TypeError(`${name}: afterAction must be a function (action) => void`);
    this.afterAction = opts.afterAction;
    if (opts.inputGradientFirst !== undefined && typeof opts.inputGradientFirst !== "boolean") throw new TypeError(`${name}: inputGradientFirst must be true or false, got ${JSON.stringify(opts.inputGradientFirst)}`);
    this.inputGradientFirst = opts.inputGradientFirst ?? true;
  }

  /** This rank's order of forwards and backwards. */
  order(): Action[] {
    const { group } = this.stages[0]!;
    return this.orderFor(group.rank, group.size, this.nMicrobatches);
  }

  /** The schedule's bubble fraction with unit-time actions and free messages. */
  idealBubbleFraction(): number {
    const { group, numStages } = this.stages[0]!;
    return idealBubbleFraction((r, p, m) => this.orderFor(r, p, m), group.size, this.nMicrobatches, numStages / group.size);
  }

  /** Group rank `rank`'s order of actions, stages by global index. */
  protected abstract orderFor(rank: number, numRanks: number, m: number): Action[];

  /**
   * Runs one batch. The rank of the first stage: `step(input)` (or `step({ input })`); the rank of
   * the last stage: `step({ target, losses })`, which returns the batch's output (the
   * micro-batches' outputs concatenated); other ranks: `step()`.
   */
  step(arg?: Tensor | StepOptions): Tensor | undefined {
    checkArity("step", arguments, 1, "schedule.step(input) on the first stage's rank, schedule.step({ target, losses }) on the last stage's, schedule.step() on others");
    const opts: StepOptions = arg instanceof Tensor ? { input: arg } : (arg ?? {});
    checkOptions("step", opts, ["input", "target", "losses"]);
    const byIndex = new Map(this.stages.map((st) => [st.stageIndex, st]));
    const { group, numStages } = this.stages[0]!;
    const first = byIndex.get(0);
    const last = byIndex.get(numStages - 1);
    const where = `step (stage${this.stages.length > 1 ? "s" : ""} ${this.stages.map((st) => st.stageIndex).join(", ")} of ${numStages}, rank ${this.stages[0]!.rank})`;
    const m = this.nMicrobatches;
    if (!!first !== (opts.input !== undefined)) throw new Error(`${where}: ${first ? "the first stage needs the batch: step(input)" : "only the first stage takes an input"}`);
    if (!last && (opts.target !== undefined || opts.losses !== undefined)) throw new Error(`${where}: only the last stage takes target and losses`);
    if (last && opts.target === undefined) throw new Error(`${where}: the last stage computes the loss and needs the targets: step({ target, losses })`);
    const inputs = opts.input ? splitBatch(opts.input, m, where, "input") : null;
    const targets = opts.target ? splitBatch(opts.target, m, where, "target") : null;
    const batch = opts.target?.shape[0] ?? 0;

    // Every send before any wait: a rank with several stages would otherwise wait on itself.
    const handshakes = this.stages.map((st) => st.handshakeSend());
    for (const st of this.stages) st.handshakeReceive();
    for (const w of handshakes) w?.wait();
    const orders = Array.from({ length: group.size }, (_, r) => this.orderFor(r, group.size, m));
    const order = orders[group.rank]!;
    const inbox = new Inbox(byIndex, orders);
    // The last backward of each stage in this step synchronises a data-parallel stage module.
    const lastBackward = new Map<number, number>();
    order.forEach((a, i) => a.kind === "B" && lastBackward.set(a.stage, i));
    const saved = new Map<string, Saved>();
    const outputs: Tensor[] = [];
    const sends: Work[] = [];
    const timeline: TimedAction[] = [];
    let peak = 0;
    const t0 = performance.now();
    const traceStart = tracing.on ? traceNow() : 0;
    // One action; its locals (a micro-batch's input, root, gradient) are dropped when it returns, before afterAction looks.
    const run = (action: Action, i: number): TimedAction => {
      const start = performance.now();
      const actionStart = tracing.on ? traceNow() : 0;
      let waitMs = 0;
      let waitStart: number | null = null;
      let sentAt: number | null = null;
      const waited = <T>(fn: () => T): T => {
        const w0 = performance.now();
        waitStart = w0 - t0;
        const r = fn();
        waitMs += performance.now() - w0;
        return r;
      };
      const { mb } = action;
      const stage = byIndex.get(action.stage);
      if (!stage) throw new Error(`internal: ${where} was given an action of stage ${action.stage}, which this rank does not hold`);
      const key = `${action.stage}:${mb}`;
      if (action.kind === "F") {
        const input = inputs && stage.isFirst ? inputs[mb]! : waited(() => spanned(`wait activation mb ${mb}`, { mb, stage: action.stage }, () => inbox.activation(stage.stageIndex - 1, mb)));
        const out = this.forward(stage, input, where);
        if (stage.isLast) {
          if (targets![mb]!.shape[0] !== input.shape[0]) {
            throw new Error(`${where}: micro-batch ${mb} has ${input.shape[0]} samples but its targets ${targets![mb]!.shape[0]}; the target batch (${batch}) must match the input batch`);
          }
          const loss = this.lossFn(out, targets![mb]!);
          if (loss.numel !== 1) throw new Error(`${where}: lossFn must return a scalar, got shape ${formatShape(loss.shape)}`);
          opts.losses?.push(loss.detach());
          const scale = this.lossScaling === "mean" ? input.shape[0]! / batch : 1;
          saved.set(key, { input, root: scale === 1 ? loss : mul(loss, scale) });
          outputs[mb] = out.detach();
        } else {
          // Posting a send does not wait (isend); its copy into the stage's message buffer is work, not bubble.
          sentAt = performance.now() - t0;
          sends.push(...stage.sendActivation(out, mb));
          inbox.sent(stage.stageIndex, mb, out.shape);
          saved.set(key, { input, root: out });
        }
        peak = Math.max(peak, saved.size);
      } else {
        const { input, root } = saved.get(key)!;
        saved.delete(key);
        const grad = stage.isLast ? undefined : waited(() => spanned(`wait gradient mb ${mb}`, { mb, stage: action.stage }, () => inbox.gradient(stage.stageIndex, mb)));
        if (lastBackward.get(action.stage) === i && syncsGradients(stage.submodule)) stage.submodule.prepareForBackward();
        // The previous stage waits for this one's input gradient, not for its weight gradients:
        // those run after the send (only a stage that sends one has a reason to defer them).
        const deferred = this.inputGradientFirst && !stage.isFirst ? [] : undefined;
        runBackward([root], [grad ?? null], { deferredLeafGradients: deferred });
        if (!stage.isFirst) {
          if (!input.grad) throw new Error(`${where}: the output of stage ${stage.stageIndex} does not depend on its input, so no gradient can go back to stage ${stage.stageIndex - 1}`);
          sentAt = performance.now() - t0;
          sends.push(stage.sendGradient(input.grad, mb));
        }
        if (deferred && deferred.length > 0) spanned(`weight gradients mb ${mb}`, { mb, stage: action.stage }, () => runDeferredLeafGradients(deferred));
      }
      if (actionStart !== 0) traceSpan(TID_TRAIN, `${action.kind === "F" ? "forward" : "backward"} mb ${mb}`, actionStart, { mb, stage: action.stage, waitMs });
      // Post the receives that became possible (a header in, an activation sent) while this rank still has work.
      inbox.pump();
      for (const st of this.stages) st.buffers.reclaim();
      return { kind: action.kind, mb, stage: action.stage, start: start - t0, end: performance.now() - t0, waitMs, waitStart, sentAt, heldBytes: memoryPool.stats()?.held ?? null };
    };
    order.forEach((action, i) => {
      const timed = run(action, i);
      timeline.push(timed);
      this.afterAction?.(timed);
    });
    spanned("wait sends", {}, () => {
      for (const w of sends) w.wait();
    });
    for (const st of this.stages) st.buffers.reclaim();
    const totalMs = performance.now() - t0;
    const busy = timeline.reduce((s, a) => s + (a.end - a.start - a.waitMs), 0);
    this.lastTimeline = { actions: timeline, origin: performance.timeOrigin + t0, totalMs, bubbleFraction: 1 - busy / Math.max(totalMs, 1e-9), peakMicrobatches: peak };
    if (traceStart !== 0) {
      traceSpan(TID_TRAIN, `${this.constructor.name}.step`, traceStart, { microbatches: m, stages: this.stages.map((st) => st.stageIndex).join(","), bubbleFraction: this.lastTimeline.bubbleFraction });
    }
    return last ? cat(outputs, 0) : undefined;
  }

  /** The stage's forward; on a stage that received its input, a failure says from where and what shape. */
  private forward(stage: PipelineStage, input: Tensor, where: string): Tensor {
    const module = stage.submodule;
    try {
      return (syncsGradients(module) ? module.noSync(() => module.call(input)) : module.call(input)) as Tensor;
    } catch (error) {
      if (stage.isFirst) throw error;
      (error as Error).message =
        `${where}: the forward of stage ${stage.stageIndex} failed on activations of shape ${formatShape(input.shape)} received from stage ${stage.stageIndex - 1} (rank ${stage.prevRank}): ${(error as Error).message}`;
      throw error;
    }
  }
}

/** A schedule over one stage per rank (torch.distributed.pipelining.PipelineScheduleSingle). */
export abstract class PipelineSchedule extends PipelineScheduleBase {
  constructor(
    readonly stage: PipelineStage,
    opts: ScheduleOptions,
  ) {
    const usage = `new ${new.target.name}(stage, { nMicrobatches, lossFn, lossScaling })`;
    checkArity(new.target.name, arguments, 2, usage);
    super([stage], opts, usage);
    if (stage.numStages !== stage.group.size) {
      throw new Error(`${new.target.name}: runs one stage per rank, but the pipeline has ${stage.numStages} stages on ${stage.group.size} ranks; use ScheduleInterleaved1F1B for several stages per rank`);
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
  protected orderFor(rank: number, p: number, m: number): Action[] {
    return gpipeOrder(rank, p, m);
  }
}

/** 1F1B: warm-up forwards, then one forward one backward (torch.distributed.pipelining.Schedule1F1B). */
export class Schedule1F1B extends PipelineSchedule {
  protected orderFor(rank: number, p: number, m: number): Action[] {
    return oneFOneBOrder(rank, p, m);
  }
}
