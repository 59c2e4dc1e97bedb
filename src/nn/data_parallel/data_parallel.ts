import { receiveMessageOnPort, MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import { Node } from "../../autograd/node.js";
import { queueCallback } from "../../autograd/engine.js";
import { isGradEnabled, noGrad } from "../../autograd/grad_mode.js";
import { cat, split } from "../../ops/join.js";
import { addInPlace, copyInPlace } from "../../ops/elementwise.js";
import { clone } from "../../ops/creation.js";
import { Tensor } from "../../tensor/tensor.js";
import { siblingModule, spawnWorker } from "../../util/spawn_worker.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { Module } from "../module.js";
import { setNumThreads } from "../../backend/num_threads.js";
import { encodeModule } from "./replica_codec.js";
import * as ch from "./channel.js";
import { MAIN_PHASES, PhaseClock, readProfile, WORKER_PHASES, type DataParallelProfile } from "./profile.js";

export interface DataParallelOptions {
  /** Replicas, the main thread's included (default 2): the batch is cut into this many pieces. */
  threads?: number;
  /** Module URLs exporting the model's own Module classes, for the worker threads to import. */
  classes?: readonly string[];
  /** How long the main thread waits for a replica (default 10 minutes). */
  timeoutMs?: number;
  /** Times each phase of a call on every thread, for profile() (default false). */
  profile?: boolean;
}

interface Replica {
  worker: Worker;
  port: MessagePort;
  slot: number;
  /** Control words (channel.ts). */
  ctrl: Int32Array;
  started: boolean;
  /** This thread's buffer for the replica's piece of the batch. */
  input: SharedArrayBuffer | null;
  /** The worker's buffers for its output and for that output's gradient. */
  output: SharedArrayBuffer | null;
  outGrad: SharedArrayBuffer | null;
  /** Views of the worker's per-parameter gradient buffers, in parameters() order. */
  grads: Tensor[];
  hasGrad: Int32Array;
  /** The forward call whose graph the worker holds. */
  forwardId: number;
  /** The worker's phase times (profile option). */
  clock: PhaseClock | null;
}

type Message = {
  error?: { message: string; stack?: string };
  output?: SharedArrayBuffer;
  outGrad?: SharedArrayBuffer;
  grads?: SharedArrayBuffer[];
  hasGrad?: Int32Array;
};

const [SCATTER, FORWARD, WAIT_FORWARD, GATHER, SEND_GRAD, WAIT_BACKWARD, SUM_GRADS] = MAIN_PHASES.map((_, i) => i) as number[] as [number, number, number, number, number, number, number];

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
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly replicas: Replica[] = [];
  private sentBuffers: SharedArrayBuffer[] = [];
  private backwardPending: Replica[] = [];
  private forwards = 0;
  private readonly clock: PhaseClock | null;
  private profiledCalls = 0;

  constructor(module: Module, options: DataParallelOptions = {}) {
    super();
    checkArity("DataParallel", arguments, 2, "new nn.DataParallel(module, { threads, classes, timeoutMs })");
    checkOptions("DataParallel", options, ["threads", "classes", "timeoutMs", "profile"]);
    if (!(module instanceof Module)) throw new TypeError(`DataParallel: expected a Module, got ${module === null ? "null" : typeof module}`);
    const threads = options.threads ?? 2;
    if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new RangeError(`DataParallel: threads must be an integer in 1..64, got ${threads}`);
    this.module = module;
    this.threads = threads;
    this.timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    const classes = [...(options.classes ?? [])];
    const encoded = encodeModule(module);
    this.clock = options.profile ? PhaseClock.create(MAIN_PHASES.length) : null;
    // The kernels' pool is the process's: the replicas are the parallelism, one kernel thread each.
    setNumThreads(1);
    this.sentBuffers = this.parameterBuffers();
    for (let slot = 1; slot < threads; slot++) {
      const ctrl = new Int32Array(new SharedArrayBuffer(4 * ch.WORDS));
      // The start-up is request 1: the worker answers it once its replica is built.
      ctrl[ch.OP] = ch.OP_START;
      ctrl[ch.CMD] = 1;
      const { port1, port2 } = new MessageChannel();
      const clock = options.profile ? PhaseClock.create(WORKER_PHASES.length) : null;
      const worker = spawnWorker(siblingModule(import.meta.url, "./worker"), {
        workerData: { port: port2, ctrl, module: encoded, classes, profile: clock?.totals ?? null },
        transferList: [port2],
      });
      worker.unref();
      port1.unref();
      this.replicas.push({ worker, port: port1, slot, ctrl, started: false, input: null, output: null, outGrad: null, grads: [], hasGrad: new Int32Array(0), forwardId: 0, clock });
    }
  }

  override forward(input: Tensor): Tensor {
    if (!(input instanceof Tensor)) throw new TypeError(`DataParallel: the input must be a Tensor (cut along dim 0), got ${typeof input}`);
    if (input.ndim === 0) throw new Error("DataParallel: the input needs a batch dimension to scatter, got a scalar");
    if (input.requiresGrad && this.replicas.length > 0) {
      throw new Error("DataParallel: an input that requires grad is not supported (its gradient would have to come back from the worker threads); detach it");
    }
    if (this.backwardPending.length > 0) this.collectGradients();
    const n = input.shape[0]!;
    const pieces = Math.min(this.threads, Math.max(n, 1));
    const sizes = Array.from({ length: pieces }, (_, i) => Math.floor(n / pieces) + (i < n % pieces ? 1 : 0));
    const chunks = split(input, sizes, 0);
    const used = this.replicas.slice(0, pieces - 1);
    for (const r of used) this.start(r);
    this.resendIfReplaced(used);
    const grad = isGradEnabled();
    const id = ++this.forwards;
    const clock = this.clock;
    clock?.start();
    used.forEach((r, i) => this.requestForward(r, chunks[i + 1]!, grad, id));
    clock?.lap(SCATTER);
    let first: Tensor | undefined;
    let failure: unknown;
    try {
      first = this.module.call(chunks[0]!) as Tensor;
    } catch (error) {
      failure = error;
    }
    clock?.lap(FORWARD);
    // Every answer is collected even when the main piece failed, so that none is left for the next call.
    const outputs: Tensor[] = [];
    for (const r of used) {
      try {
        this.wait(r, "forward");
        const c = r.ctrl;
        outputs.push(ch.tensorOver(r.output!, ch.dtypeOf(c[ch.OUT_DTYPE]!), ch.readShape(c, ch.OUT_SHAPE, ch.OUT_NDIM)));
      } catch (error) {
        failure ??= error;
      }
    }
    clock?.lap(WAIT_FORWARD);
    if (failure !== undefined) throw failure;
    if (!(first instanceof Tensor)) throw new TypeError(`DataParallel: the module must return one tensor, got ${typeof first}`);
    if (grad && first.requiresGrad) {
      outputs.forEach((out, i) => {
        out.gradFn = new Node("DataParallelBackward", [], (g) => this.startBackward(used[i]!, g, id), []);
      });
    }
    // cat copies: the replicas' output buffers are theirs to overwrite at the next call.
    const gathered = cat([first, ...outputs], 0);
    clock?.lap(GATHER);
    if (clock) this.profiledCalls++;
    return gathered;
  }

  private requestForward(r: Replica, piece: Tensor, grad: boolean, id: number): void {
    const c = r.ctrl;
    let flags = (grad ? ch.F_GRAD : 0) | (this.module.training ? ch.F_TRAINING : 0);
    const bigger = ch.grown(r.input, ch.bytesFor(piece.dtype, piece.numel));
    if (bigger) {
      r.input = bigger;
      r.port.postMessage({ input: bigger });
      flags |= ch.F_PORT;
    }
    noGrad(() => copyInPlace(ch.tensorOver(r.input!, piece.dtype, piece.shape), piece));
    c[ch.IN_DTYPE] = ch.dtypeCode(piece.dtype);
    ch.writeShape(c, ch.IN_SHAPE, ch.IN_NDIM, piece.shape, "input");
    r.forwardId = id;
    this.request(r, ch.OP_FORWARD, flags);
  }

  /** Starts a replica's backward; the gradients are collected once the whole backward pass is done. */
  private startBackward(r: Replica, g: Tensor, id: number): [] {
    if (r.forwardId !== id) {
      throw new Error(`DataParallel: backward through the output of call ${id}, but replica ${r.slot} already ran call ${r.forwardId}; run each call's backward before the next call`);
    }
    const c = r.ctrl;
    this.clock?.start();
    noGrad(() => copyInPlace(ch.tensorOver(r.outGrad!, ch.dtypeOf(c[ch.OUT_DTYPE]!), ch.readShape(c, ch.OUT_SHAPE, ch.OUT_NDIM)), g));
    r.forwardId = 0;
    this.request(r, ch.OP_BACKWARD, 0);
    this.clock?.lap(SEND_GRAD);
    if (this.backwardPending.length === 0) queueCallback(() => this.collectGradients());
    this.backwardPending.push(r);
    return [];
  }

  private collectGradients(): void {
    const params = [...this.module.parameters()];
    const pending = this.backwardPending;
    this.backwardPending = [];
    let failure: unknown;
    this.clock?.start();
    for (const r of pending) {
      try {
        this.wait(r, "backward");
      } catch (error) {
        failure ??= error;
      }
    }
    this.clock?.lap(WAIT_BACKWARD);
    if (failure !== undefined) throw failure;
    noGrad(() => {
      for (const r of pending) {
        for (let i = 0; i < params.length; i++) {
          if (!r.hasGrad[i]) continue;
          const p = params[i]!;
          if (p.grad) addInPlace(p.grad, r.grads[i]!);
          else p.grad = clone(r.grads[i]!);
        }
      }
    });
    this.clock?.lap(SUM_GRADS);
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
    this.clock?.addCpu();
    this.clock?.totals.fill(0);
    for (const r of this.replicas) r.clock?.totals.fill(0);
  }

  /** Sends the module again where a parameter's memory was replaced (module.to(), loadStateDict with assign). */
  private resendIfReplaced(used: readonly Replica[]): void {
    const now = this.parameterBuffers();
    if (now.length === this.sentBuffers.length && now.every((b, i) => b === this.sentBuffers[i])) return;
    const encoded = encodeModule(this.module);
    for (const r of used) {
      r.port.postMessage({ module: encoded });
      this.request(r, ch.OP_MESSAGE, ch.F_PORT);
    }
    for (const r of used) this.wait(r, "module update");
    this.sentBuffers = now;
  }

  private parameterBuffers(): SharedArrayBuffer[] {
    return [...this.module.parameters(), ...[...this.module.namedBuffers()].map(([, b]) => b)].map((t) => t.storage.data.buffer as SharedArrayBuffer);
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
    Atomics.add(c, ch.CMD, 1);
    Atomics.notify(c, ch.CMD);
  }

  /** Blocks until replica `r` has answered its last request, then takes what it left on the port. */
  private wait(r: Replica, what: string): void {
    const c = r.ctrl;
    const expected = Atomics.load(c, ch.CMD);
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const done = Atomics.load(c, ch.DONE);
      if (done === expected) break;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`DataParallel: replica ${r.slot} (worker thread ${r.worker.threadId}) did not answer its ${what} within ${this.timeoutMs} ms`);
      Atomics.wait(c, ch.DONE, done, Math.min(left, 1000));
    }
    const status = c[ch.STATUS]!;
    if (status === ch.S_OK) return;
    if (status === ch.S_EXITED) throw new Error(`DataParallel: replica ${r.slot} (worker thread ${r.worker.threadId}) exited during its ${what}`);
    const message = this.takeMessage(r, what);
    if (message.error) {
      const error = new Error(`DataParallel: replica ${r.slot} failed in its ${what}: ${message.error.message}`);
      if (message.error.stack) error.stack = `${error.message}\n    [in worker thread] ${message.error.stack}`;
      throw error;
    }
    if (message.output) {
      r.output = message.output;
      r.outGrad = message.outGrad!;
    }
    if (message.grads) {
      const params = [...this.module.parameters()];
      r.grads = message.grads.map((b, i) => ch.tensorOver(b, params[i]!.dtype, params[i]!.shape));
      r.hasGrad = message.hasGrad!;
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
