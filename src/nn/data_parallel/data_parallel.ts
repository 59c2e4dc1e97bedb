import { receiveMessageOnPort, MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import { Node } from "../../autograd/node.js";
import { queueCallback } from "../../autograd/engine.js";
import { isGradEnabled, noGrad, setGradEnabled } from "../../autograd/grad_mode.js";
import { split } from "../../ops/join.js";
import { finishGather, startGather } from "./gather.js";
import { addInPlace, binaryInPlace, copyInPlace } from "../../ops/elementwise.js";
import { clone } from "../../ops/creation.js";
import { Tensor } from "../../tensor/tensor.js";
import { siblingModule, spawnWorker } from "../../util/spawn_worker.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { Module } from "../module.js";
import { setNumThreads } from "../../backend/num_threads.js";
import { encodeModule } from "./replica_codec.js";
import { equalPieces, PieceBalancer } from "./balance.js";
import { SPIN_MS, spinWhile } from "./spin.js";
import * as ch from "./channel.js";
import { ANSWERED_AT, MAIN_PHASES, PhaseClock, readProfile, REQUESTED_AT, WORKER_PHASES, type DataParallelProfile } from "./profile.js";
import { workerYoungGenerationMb } from "../../launch/young_generation.js";

export interface DataParallelOptions {
  /** Replicas, the main thread's included (default 2): the batch is cut into this many pieces. */
  threads?: number;
  /** Module URLs exporting the model's own Module classes, for the worker threads to import. */
  classes?: readonly string[];
  /** How long the main thread waits for a replica (default 10 minutes). */
  timeoutMs?: number;
  /** Times each phase of a call on every thread, for profile() (default false). */
  profile?: boolean;
  /**
   * Moves samples between the pieces by the times the threads finished, so that no thread waits
   * for another (default true; balance.ts). False: equal pieces, as PyTorch's scatter.
   */
  balance?: boolean;
  /**
   * How long a thread polls for the other's answer or request before it blocks, in ms (default 2;
   * 0 blocks at once, as one would on cores that other work shares; spin.ts).
   */
  spinMs?: number;
  /**
   * A loss module (`new nn.CrossEntropyLoss()`, `new nn.MSELoss()`, or a class of your own named in
   * `classes`) for forwardLoss(): each replica applies it to its piece of the output and of the
   * target, so the loss and its backward run in parallel too. Its `reduction` ("mean" when it has
   * none) says how the pieces' losses are combined: "mean" weighs each by its share of the batch.
   */
  criterion?: Module;
}

interface Replica {
  worker: Worker;
  port: MessagePort;
  slot: number;
  /** Control words (channel.ts). */
  ctrl: Int32Array;
  /** Their Float64 words: when the worker answered (channel.ts's wallMs clock). */
  times: Float64Array;
  /** How much later than the main thread the worker finished this call's forward (ms; NaN: not measured). */
  lateForwardMs: number;
  started: boolean;
  /** This thread's buffers for the replica's piece of the batch and of the target (forwardLoss). */
  input: SharedArrayBuffer | null;
  target: SharedArrayBuffer | null;
  /** The worker's buffers for its output and for that output's gradient. */
  output: SharedArrayBuffer | null;
  outGrad: SharedArrayBuffer | null;
  /** Views of the worker's per-parameter gradient buffers, in parameters() order. */
  grads: Tensor[];
  /** Per parameter, the backward pass whose gradient its buffer holds (channel.ts's PASS). */
  ready: Int32Array;
  /** Per parameter, the last pass whose gradient this thread has added into `.grad`. */
  taken: Int32Array;
  /** This replica's backward passes so far: the number sent with the next request. */
  pass: number;
  /** The forward call whose graph the worker holds. */
  forwardId: number;
  /**
   * The pass of a backward the worker runs on its own after its forward (forwardLoss with grad,
   * channel.ts's F_BACKWARD) that this thread has not yet waited for; 0 when none.
   */
  backwardPass: number;
  /** What the replica's gradients are multiplied by when added into `.grad`: the gradient its loss got, for a backward run with a seed of 1. */
  gradScale: number;
  /** The worker's phase times (profile option). */
  clock: PhaseClock | null;
}

/** What a replica output's graph node hands its backward: the replica and the call it ran. */
interface ReplicaBackward {
  dp: DataParallel;
  replica: Replica;
  id: number;
}

type Message = {
  error?: { message: string; stack?: string };
  output?: SharedArrayBuffer;
  outGrad?: SharedArrayBuffer;
  grads?: SharedArrayBuffer[];
  ready?: Int32Array;
};

const [SCATTER, FORWARD, WAIT_FORWARD, GATHER, SEND_GRAD, WAIT_BACKWARD, SUM_WHILE_WAITING, SUM_GRADS, BETWEEN_CALLS] = MAIN_PHASES.map((_, i) => i) as number[] as [number, number, number, number, number, number, number, number, number];

/**
 * Data parallelism in one process (torch.nn.DataParallel), on worker threads that truly run at the
 * same time: the batch is cut along dim 0 into `threads` pieces; the main thread runs the first
 * on the module itself and each worker thread one on a replica that shares the module's parameter
 * and buffer memory (tensor storage is a SharedArrayBuffer), so an optimizer step on the module is
 * seen by every replica without a copy. The outputs are gathered (concatenated) on the main
 * thread; in backward, each replica's gradients are summed into the module's `.grad`, so a loss
 * on the gathered output gives the same gradients as the module on the whole batch.
 *
 * The call is synchronous, as any module's: the main thread blocks in Atomics.wait while the
 * replicas finish. A step passes no message between threads: pieces, outputs and gradients go
 * through buffers each replica keeps (channel.ts). The kernels' thread pool belongs to the
 * process, and DataParallel sets it to one thread (setNumThreads(1)): the replicas are the
 * parallelism. The module takes one tensor and returns one tensor. Replicas are rebuilt from the
 * module's structure: ringtorch's nn classes are known to the workers; classes of your own must be
 * exported from files named in `classes`. Forward hooks and parameters replaced after construction
 * are not followed except through `module.to()`-style storage changes, which are detected and
 * re-sent. Each call's backward must run before the next call (a replica keeps one graph).
 */
export class DataParallel extends Module {
  module: Module;
  /**
   * The loss module of forwardLoss(), or null. A private field, not a child module: the state dict,
   * parameters() and train() stay those of `module`, as without a criterion.
   */
  readonly #criterion: Module | null;
  private readonly lossScaling: "mean" | "sum";
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly replicas: Replica[] = [];
  /**
   * The module's parameters (parameters() order, as the replicas have them) and then its buffers,
   * listed when the module was last sent, and the memory each had then. Listed once, not per call:
   * walking the module tree (parameters(), namedBuffers()) cost 0.13 ms of CPU a step on the small
   * Transformer, in the serial part of every step.
   */
  private params: Tensor[] = [];
  private tensors: Tensor[] = [];
  private sentBuffers: ArrayBufferLike[] = [];
  private backwardPending: Replica[] = [];
  private forwards = 0;
  private readonly clock: PhaseClock | null;
  private profiledCalls = 0;
  private readonly balancer: PieceBalancer | null;
  private readonly spinMs: number;
  /** This call's start and the main thread's piece's end of forward (wallMs), and its piece's size, for the balancer. */
  private callStartMs = 0;
  private mainForwardMs = 0;
  private mainPiece = 0;
  /** The last profiled event was the gradient sum: the time until the next scatter is the caller's (betweenCalls). */
  private summed = false;
  /**
   * Made once: a closure made at each call would be a new function every step, whose optimized
   * code V8 drops at each full collection (no live closure holds it) and compiles again.
   */
  private readonly collectAfterBackward = (): void => this.collectGradients();
  /** The replica whose backward the main thread waits for, for sumReady. */
  private waitingFor: Replica | null = null;
  /** Made once, as collectAfterBackward: what the main thread does while it waits for a replica's backward. */
  private readonly sumWhileWaiting = (): boolean => this.sumReady(this.waitingFor!);

  constructor(module: Module, options: DataParallelOptions = {}) {
    super();
    checkArity("DataParallel", arguments, 2, "new nn.DataParallel(module, { threads, classes, timeoutMs, profile, criterion, balance, spinMs })");
    checkOptions("DataParallel", options, ["threads", "classes", "timeoutMs", "profile", "criterion", "balance", "spinMs"]);
    if (!(module instanceof Module)) throw new TypeError(`DataParallel: expected a Module, got ${module === null ? "null" : typeof module}`);
    const threads = options.threads ?? 2;
    if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new RangeError(`DataParallel: threads must be an integer in 1..64, got ${threads}`);
    this.module = module;
    const criterion = options.criterion ?? null;
    if (criterion !== null && !(criterion instanceof Module)) throw new TypeError(`DataParallel: the criterion must be a loss Module (e.g. new nn.CrossEntropyLoss()), got ${typeof criterion}`);
    this.#criterion = criterion;
    this.lossScaling = lossScalingOf(criterion);
    this.threads = threads;
    this.timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    const classes = [...(options.classes ?? [])];
    const encoded = encodeModule(module);
    const encodedCriterion = criterion ? encodeModule(criterion) : null;
    this.clock = options.profile ? PhaseClock.create(MAIN_PHASES.length) : null;
    if (options.balance !== undefined && typeof options.balance !== "boolean") throw new TypeError(`DataParallel: balance must be true or false, got ${typeof options.balance}`);
    const spinMs = options.spinMs ?? SPIN_MS;
    if (typeof spinMs !== "number" || !(spinMs >= 0 && spinMs <= 1000)) throw new RangeError(`DataParallel: spinMs must be a number of milliseconds in 0..1000, got ${String(spinMs)}`);
    this.spinMs = spinMs;
    this.balancer = options.balance === false || threads < 2 ? null : new PieceBalancer(threads - 1);
    // The kernels' pool is the process's: the replicas are the parallelism, one kernel thread each.
    setNumThreads(1);
    this.listTensors();
    const youngGenerationMb = workerYoungGenerationMb(process.execArgv, process.env);
    for (let slot = 1; slot < threads; slot++) {
      const ctrl = ch.controlWords();
      // The start-up is request 1: the worker answers it once its replica is built.
      ctrl[ch.OP] = ch.OP_START;
      ctrl[ch.CMD] = 1;
      const { port1, port2 } = new MessageChannel();
      const clock = options.profile ? PhaseClock.create(WORKER_PHASES.length) : null;
      const worker = spawnWorker(siblingModule(import.meta.url, "./worker"), {
        workerData: { port: port2, ctrl, module: encoded, criterion: encodedCriterion, classes, profile: clock?.totals ?? null, spinMs: this.spinMs },
        transferList: [port2],
        // A small young generation: every scavenge the replica's arena asks for costs less (young_generation.ts).
        resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb },
      });
      worker.unref();
      port1.unref();
      this.replicas.push({ worker, port: port1, slot, ctrl, times: ch.timesOf(ctrl), lateForwardMs: NaN, started: false, input: null, target: null, output: null, outGrad: null, grads: [], ready: new Int32Array(0), taken: new Int32Array(0), pass: 0, forwardId: 0, backwardPass: 0, gradScale: 1, clock });
    }
  }

  override forward(input: Tensor): Tensor {
    const run = this.scatterRun(input, null);
    const { outputs, used, id } = run;
    if (!(run.first instanceof Tensor)) throw new TypeError(`DataParallel: the module must return one tensor, got ${typeof run.first}`);
    const clock = this.clock;
    clock?.start();
    if (run.grad && run.first.requiresGrad) {
      outputs.forEach((out, i) => {
        out.gradFn = new Node("DataParallelBackward", [], DataParallel.replicaBackward, [], { dp: this, replica: used[i]!, id });
      });
    }
    // A copy: the replicas' output buffers are theirs to overwrite at the next call.
    const gathered = finishGather(run.gathering, run.first, outputs);
    clock?.lap(GATHER);
    return gathered;
  }

  /**
   * The criterion's loss on the whole batch, each replica applying it to its own piece of the
   * output and of `target` (cut along dim 0 as the input is), so that the loss, and in backward its
   * gradient, cost the main thread only its own piece: no gather, and the replicas' backward starts
   * as soon as backward() reaches them. With a "mean" reduction the pieces' losses are weighed by
   * their share of the batch (n_i / n), which gives the whole batch's loss and gradient where the
   * mean is over a count proportional to the samples (not with class weights or ignored targets).
   */
  forwardLoss(input: Tensor, target: Tensor): Tensor {
    if (!this.#criterion) throw new Error("DataParallel: forwardLoss needs the criterion option (new nn.DataParallel(module, { criterion: new nn.CrossEntropyLoss() }))");
    if (!(target instanceof Tensor)) throw new TypeError(`DataParallel: forwardLoss's target must be a Tensor (cut along dim 0), got ${typeof target}`);
    if (input instanceof Tensor && (target.ndim === 0 || target.shape[0] !== input.shape[0])) {
      throw new Error(`DataParallel: forwardLoss's target must have the input's batch size along dim 0 (${input.shape[0]}), got shape [${target.shape.join(", ")}]`);
    }
    if (target.requiresGrad && this.replicas.length > 0) throw new Error("DataParallel: a target that requires grad is not supported; detach it");
    const run = this.scatterRun(input, target);
    const { outputs, used, id, sizes } = run;
    const first = run.first as Tensor;
    if (!(first instanceof Tensor) || first.ndim !== 0) {
      throw new TypeError(`DataParallel: the criterion must return a scalar loss, got ${first instanceof Tensor ? `shape [${first.shape.join(", ")}]` : typeof first}`);
    }
    this.clock?.start();
    const n = input.shape[0]!;
    const share = (i: number) => (this.lossScaling === "mean" ? sizes[i]! / n : 1);
    // The replicas' terms are made last, so that backward (later nodes first) starts them before the main piece.
    let total = share(0) === 1 ? first : first.mul(share(0));
    outputs.forEach((loss, i) => {
      if (run.grad && first.requiresGrad) loss.gradFn = new Node("DataParallelBackward", [], DataParallel.replicaBackward, [], { dp: this, replica: used[i]!, id });
      total = total.add(share(i + 1) === 1 ? loss : loss.mul(share(i + 1)));
    });
    this.clock?.lap(GATHER);
    return total;
  }

  /** Scatters input (and target) over the replicas, runs the main thread's piece, and waits for the others' outputs. */
  private scatterRun(input: Tensor, target: Tensor | null): { first: unknown; outputs: Tensor[]; used: Replica[]; id: number; grad: boolean; sizes: number[]; gathering: Tensor | null } {
    if (!(input instanceof Tensor)) throw new TypeError(`DataParallel: the input must be a Tensor (cut along dim 0), got ${typeof input}`);
    if (input.ndim === 0) throw new Error("DataParallel: the input needs a batch dimension to scatter, got a scalar");
    if (input.requiresGrad && this.replicas.length > 0) {
      throw new Error("DataParallel: an input that requires grad is not supported (its gradient would have to come back from the worker threads); detach it");
    }
    if (this.backwardPending.length > 0) this.collectGradients();
    // A backward the workers ran on their own for a call whose backward never came: its graph holds
    // the input and target buffers about to be overwritten.
    for (const r of this.replicas) if (r.backwardPass !== 0) this.settleBackward(r);
    const n = input.shape[0]!;
    const sizes = this.pieceSizes(n);
    const chunks = split(input, sizes, 0);
    const targets = target ? split(target, sizes, 0) : null;
    const used = this.replicas.slice(0, sizes.length - 1);
    for (const r of used) this.start(r);
    this.resendIfReplaced(used);
    const grad = isGradEnabled();
    const id = ++this.forwards;
    const clock = this.clock;
    if (clock && this.summed) clock.lap(BETWEEN_CALLS);
    this.summed = false;
    clock?.start();
    this.callStartMs = ch.wallMs();
    this.mainPiece = sizes[0]!;
    used.forEach((r, i) => this.requestForward(r, chunks[i + 1]!, targets?.[i + 1] ?? null, grad, id));
    clock?.lap(SCATTER);
    let first: unknown;
    let failure: unknown;
    try {
      first = this.module.call(chunks[0]!);
      if (targets) first = this.#criterion!.call(first as Tensor, targets[0]!);
    } catch (error) {
      failure = error;
    }
    clock?.lap(FORWARD);
    this.mainForwardMs = ch.wallMs();
    // The plain call's gather starts with the main thread's own output, while the replicas finish theirs.
    let gathering: Tensor | null = null;
    if (target === null && failure === undefined && first instanceof Tensor) {
      try {
        gathering = startGather(first, n);
      } catch (error) {
        failure = error;
      }
      clock?.lap(GATHER);
    }
    // Every answer is collected even when the main piece failed, so that none is left for the next call.
    const outputs: Tensor[] = [];
    for (const r of used) {
      try {
        this.wait(r, "forward");
        r.lateForwardMs = r.times[ch.ANSWERED_MS]! - this.mainForwardMs;
        const c = r.ctrl;
        outputs.push(ch.tensorOver(r.output!, ch.dtypeOf(c[ch.OUT_DTYPE]!), ch.readShape(c, ch.OUT_SHAPE, ch.OUT_NDIM)));
      } catch (error) {
        failure ??= error;
      }
    }
    clock?.lap(WAIT_FORWARD);
    if (failure !== undefined) throw failure;
    if (clock) this.profiledCalls++;
    return { first, outputs, used, id, grad, sizes, gathering };
  }

  private requestForward(r: Replica, piece: Tensor, target: Tensor | null, grad: boolean, id: number): void {
    const c = r.ctrl;
    let flags = (grad ? ch.F_GRAD : 0) | (this.module.training ? ch.F_TRAINING : 0) | (target ? ch.F_LOSS : 0);
    const bigger = ch.grown(r.input, ch.bytesFor(piece.dtype, piece.numel));
    const biggerTarget = target ? ch.grown(r.target, ch.bytesFor(target.dtype, target.numel)) : null;
    if (bigger || biggerTarget) {
      if (bigger) r.input = bigger;
      if (biggerTarget) r.target = biggerTarget;
      r.port.postMessage({ input: bigger ?? undefined, target: biggerTarget ?? undefined });
      flags |= ch.F_PORT;
    }
    noGrad(() => copyInPlace(ch.tensorOver(r.input!, piece.dtype, piece.shape), piece));
    c[ch.IN_DTYPE] = ch.dtypeCode(piece.dtype);
    ch.writeShape(c, ch.IN_SHAPE, ch.IN_NDIM, piece.shape, "input");
    if (target) {
      noGrad(() => copyInPlace(ch.tensorOver(r.target!, target.dtype, target.shape), target));
      c[ch.TGT_DTYPE] = ch.dtypeCode(target.dtype);
      ch.writeShape(c, ch.TGT_SHAPE, ch.TGT_NDIM, target.shape, "target");
    }
    r.forwardId = id;
    if (target && grad) {
      // The worker runs its piece's backward right after its forward (worker.ts's backwardAtOnce).
      flags |= ch.F_BACKWARD;
      c[ch.PASS] = r.backwardPass = ++r.pass;
    }
    this.request(r, ch.OP_FORWARD, flags);
  }

  /**
   * A replica output's backward: a function made once with its replica in the node's ctx, not a
   * closure per call, whose optimized code V8 would drop at each full collection (BackwardFn).
   */
  private static replicaBackward(g: Tensor, c: ReplicaBackward): [] {
    return c.dp.startBackward(c.replica, g, c.id);
  }

  /** Starts a replica's backward; the gradients are collected once the whole backward pass is done. */
  private startBackward(r: Replica, g: Tensor, id: number): [] {
    if (r.forwardId !== id) {
      throw new Error(`DataParallel: backward through the output of call ${id}, but replica ${r.slot} already ran call ${r.forwardId}; run each call's backward before the next call`);
    }
    const c = r.ctrl;
    this.clock?.start();
    if (r.backwardPass !== 0) {
      // Its backward already runs, with a seed of 1 for its loss (a scalar): its gradients are scaled by this one when added.
      r.gradScale = g.item();
      r.forwardId = 0;
      if (this.backwardPending.length === 0) queueCallback(this.collectAfterBackward);
      this.backwardPending.push(r);
      return [];
    }
    r.gradScale = 1;
    noGrad(() => copyInPlace(ch.tensorOver(r.outGrad!, ch.dtypeOf(c[ch.OUT_DTYPE]!), ch.readShape(c, ch.OUT_SHAPE, ch.OUT_NDIM)), g));
    r.forwardId = 0;
    c[ch.PASS] = ++r.pass;
    this.request(r, ch.OP_BACKWARD, 0);
    this.clock?.lap(SEND_GRAD);
    if (this.backwardPending.length === 0) queueCallback(this.collectAfterBackward);
    this.backwardPending.push(r);
    return [];
  }

  /**
   * After a backward pass: the main thread's piece is done; waits for the replicas' and sums their
   * gradients into `.grad`. Each replica hands over a parameter's gradient as soon as its backward
   * has it (worker.ts's handOver), so the main thread, usually done first, adds those while it waits
   * (sumReady), and only the last few layers' are left for after the replicas' answers: the sum
   * leaves the serial part that the replicas idle through before their next forward. Should a
   * replica fail, its error is thrown after the others have answered, with `.grad` partly summed.
   */
  private collectGradients(): void {
    const mainBackwardMs = ch.wallMs();
    const pending = this.backwardPending;
    this.backwardPending = [];
    let failure: unknown;
    this.clock?.start();
    for (const r of pending) {
      try {
        this.waitingFor = r;
        if (r.backwardPass !== 0) this.waitBackwardAtOnce(r, this.sumWhileWaiting);
        else this.wait(r, "backward", this.sumWhileWaiting);
      } catch (error) {
        failure ??= error;
      }
    }
    this.waitingFor = null;
    this.clock?.lap(WAIT_BACKWARD);
    // Which of them ran their backward at once (F_BACKWARD): waited for, so none is left outstanding, even on failure.
    const atOnce: boolean[] = [];
    for (const r of pending) {
      atOnce.push(r.backwardPass !== 0);
      r.backwardPass = 0;
    }
    if (failure !== undefined) throw failure;
    // For the worker's profile: it splits its idle before the next forward at this time (worker.ts).
    for (const r of pending) r.times[ch.MAIN_BACKWARD_MS] = mainBackwardMs;
    if (this.balancer) {
      const sampleMs = (mainBackwardMs - this.callStartMs) / this.mainPiece;
      for (let i = 0; i < pending.length; i++) {
        const r = pending[i]!;
        // A backward run at once follows the worker's forward without a wait: when it ended is the whole lag.
        const late = atOnce[i] ? r.times[ch.BACKWARD_MS]! - mainBackwardMs : r.lateForwardMs + r.times[ch.ANSWERED_MS]! - mainBackwardMs;
        if (!Number.isNaN(r.lateForwardMs)) this.balancer.record(r.slot - 1, late, sampleMs);
        r.lateForwardMs = NaN;
      }
    }
    for (const r of pending) this.sumReady(r);
    this.clock?.lap(SUM_GRADS);
    this.summed = this.clock !== null;
  }

  /**
   * Adds into `.grad` each of replica `r`'s gradients that its backward has handed over and this
   * thread has not yet added; true if there was one. A parameter the replica's pass gave no gradient
   * is never marked with its pass, so it is skipped, as a leaf backward did not reach.
   */
  private sumReady(r: Replica): boolean {
    const params = this.params;
    const pass = r.pass;
    const scale = r.gradScale;
    let any = false;
    const gradMode = isGradEnabled();
    setGradEnabled(false);
    try {
      for (let i = 0; i < params.length; i++) {
        if (r.taken[i] === pass || Atomics.load(r.ready, i) !== pass) continue;
        if (!any && this.clock && this.waitingFor) this.clock.lap(WAIT_BACKWARD);
        r.taken[i] = pass;
        any = true;
        const p = params[i]!;
        // The buffer is this thread's until the replica's next pass: scaled where it lies.
        const g = scale === 1 ? r.grads[i]! : binaryInPlace("mul", r.grads[i]!, scale, "mul_");
        if (p.grad) addInPlace(p.grad, g);
        else p.grad = clone(g);
      }
    } finally {
      setGradEnabled(gradMode);
    }
    if (any && this.clock && this.waitingFor) this.clock.lap(SUM_WHILE_WAITING);
    return any;
  }

  /**
   * The pieces a batch of `n` is cut into (the main thread's first): equal at first, then moved by
   * the balancer (the balance option) towards pieces that the threads finish at the same time.
   */
  pieceSizes(n: number): number[] {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`DataParallel: pieceSizes expects a batch size (an integer >= 0), got ${n}`);
    const pieces = Math.min(this.threads, Math.max(n, 1));
    return this.balancer ? this.balancer.sizes(n, pieces) : equalPieces(n, pieces);
  }

  /**
   * Per-call wall and CPU time of each phase on the main thread and on each worker, averaged over
   * the calls since construction or the last resetProfile() (needs the `profile` option).
   */
  profile(): DataParallelProfile {
    if (!this.clock) throw new Error("DataParallel: profile() needs the profile option (new nn.DataParallel(module, { profile: true }))");
    this.clock.addCpu();
    return {
      calls: this.profiledCalls,
      main: readProfile(MAIN_PHASES, this.clock.totals, this.profiledCalls),
      workers: this.replicas.map((r) => readProfile(WORKER_PHASES, r.clock!.totals, this.profiledCalls)),
    };
  }

  resetProfile(): void {
    this.profiledCalls = 0;
    this.summed = false;
    this.clock?.addCpu();
    this.clock?.reset();
    for (const r of this.replicas) r.clock?.reset();
  }

  /** Sends the module again where a parameter's or buffer's memory was replaced (module.to(), a cast). */
  private resendIfReplaced(used: readonly Replica[]): void {
    const tensors = this.tensors;
    let same = true;
    for (let i = 0; i < tensors.length && same; i++) same = tensors[i]!.storage.data.buffer === this.sentBuffers[i];
    if (same) return;
    const encoded = encodeModule(this.module);
    // Listed before the replicas answer: their answers' gradient buffers take these parameters' shapes.
    this.listTensors();
    for (const r of used) {
      r.port.postMessage({ module: encoded });
      this.request(r, ch.OP_MESSAGE, ch.F_PORT);
    }
    for (const r of used) this.wait(r, "module update");
  }

  private listTensors(): void {
    this.params = [...this.module.parameters()];
    this.tensors = [...this.params, ...this.module.buffers()];
    this.sentBuffers = this.tensors.map((t) => t.storage.data.buffer);
  }

  private start(r: Replica): void {
    if (r.started) return;
    this.wait(r, "start-up");
    r.started = true;
  }

  private request(r: Replica, op: number, flags: number): void {
    const c = r.ctrl;
    c[ch.OP] = op;
    c[ch.FLAGS] = flags;
    if (r.clock) PhaseClock.stamp(r.clock.totals, REQUESTED_AT);
    Atomics.add(c, ch.CMD, 1);
    Atomics.notify(c, ch.CMD);
  }

  /**
   * Blocks until replica `r` has answered its last request, then takes what it left on the port.
   * `work`, while it waits: called between polls until it returns false (nothing to do yet).
   */
  private wait(r: Replica, what: string, work?: () => boolean): void {
    const c = r.ctrl;
    this.waitWord(r, what, ch.DONE, Atomics.load(c, ch.CMD), work);
    const status = c[ch.STATUS]!;
    if (status === ch.S_OK) return;
    if (status === ch.S_EXITED) throw exitedError(r, what);
    const message = this.takeMessage(r, what);
    if (message.error) throw workerError(r, what, message.error);
    if (message.output) {
      r.output = message.output;
      r.outGrad = message.outGrad!;
    }
    if (message.grads) {
      const params = this.params;
      r.grads = message.grads.map((b, i) => ch.tensorOver(b, params[i]!.dtype, params[i]!.shape));
      r.ready = message.ready!;
      r.taken = new Int32Array(params.length);
    }
  }

  /** Blocks until word `at` of replica `r`'s control words holds `expected` (polling, then Atomics.wait; `work` as in wait()). */
  private waitWord(r: Replica, what: string, at: number, expected: number, work?: () => boolean): void {
    const c = r.ctrl;
    const deadline = Date.now() + this.timeoutMs;
    let blocked = false;
    for (;;) {
      const done = Atomics.load(c, at);
      if (done === expected) break;
      // Ended before this request reached it (an answer it gave before ending was taken above).
      if (Atomics.load(c, ch.EXITED) === 1) throw exitedError(r, what, "before answering");
      if (work !== undefined && work()) continue;
      if (!blocked && spinWhile(c, at, done, this.spinMs, work)) continue;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`DataParallel: replica ${r.slot} (worker thread ${r.worker.threadId}) did not answer its ${what} within ${this.timeoutMs} ms`);
      Atomics.wait(c, at, done, Math.min(left, 1000));
      blocked = true;
    }
    if (blocked && this.clock && r.clock) this.clock.woke(r.clock.totals, ANSWERED_AT);
  }

  /** Waits for the backward replica `r` runs after its forward (F_BACKWARD); throws its error. */
  private waitBackwardAtOnce(r: Replica, work?: () => boolean): void {
    this.waitWord(r, "backward", ch.BACKWARD_DONE, r.backwardPass, work);
    const status = r.ctrl[ch.BACKWARD_STATUS]!;
    if (status === ch.S_OK) return;
    if (status === ch.S_EXITED) throw exitedError(r, "backward");
    throw workerError(r, "backward", this.takeMessage(r, "backward").error ?? { message: "unknown error" });
  }

  /** Waits out a backward replica `r` ran on its own for a call whose backward never came (its gradients are not used). */
  private settleBackward(r: Replica): void {
    try {
      this.waitBackwardAtOnce(r);
    } finally {
      r.backwardPass = 0;
    }
  }

  private takeMessage(r: Replica, what: string): Message {
    // The worker posts before it raises DONE; the message is on the port by then.
    for (let tries = 0; tries < 1000; tries++) {
      const m = receiveMessageOnPort(r.port);
      if (m) return m.message as Message;
      ch.nap(1);
    }
    throw new Error(`DataParallel: replica ${r.slot} signalled an answer to its ${what} but left no message`);
  }

  /** Ends the worker threads (they do not keep the process alive either way). */
  async close(): Promise<void> {
    for (const r of this.replicas) this.request(r, ch.OP_CLOSE, 0);
    await Promise.all(this.replicas.map((r) => r.worker.terminate()));
    this.replicas.length = 0;
  }
}

/** How forwardLoss combines the pieces' losses: from the criterion's reduction ("mean" when it has none). */
function lossScalingOf(criterion: Module | null): "mean" | "sum" {
  const reduction = (criterion as { reduction?: unknown } | null)?.reduction ?? "mean";
  if (reduction === "mean" || reduction === "sum") return reduction;
  throw new Error(`DataParallel: the criterion's reduction must be "mean" or "sum" (the pieces' losses are combined into the batch's), got ${JSON.stringify(reduction)}`);
}

/** An error a replica's worker thread sent back (worker.ts's errorReply), with its stack there. */
function workerError(r: Replica, what: string, failed: { message: string; stack?: string }): Error {
  const error = new Error(`DataParallel: replica ${r.slot} failed in its ${what}: ${failed.message}`);
  if (failed.stack) error.stack = `${error.message}\n    [in worker thread] ${failed.stack}`;
  return error;
}

function exitedError(r: Replica, what: string, when: "during" | "before answering" = "during"): Error {
  return new Error(`DataParallel: replica ${r.slot} (worker thread ${r.worker.threadId}) exited ${when} its ${what}`);
}
