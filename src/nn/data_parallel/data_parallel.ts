import { receiveMessageOnPort, MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import { Node } from "../../autograd/node.js";
import { queueCallback } from "../../autograd/engine.js";
import { isGradEnabled, noGrad } from "../../autograd/grad_mode.js";
import { cat, split } from "../../ops/join.js";
import { addInPlace } from "../../ops/elementwise.js";
import { clone } from "../../ops/creation.js";
import { Tensor } from "../../tensor/tensor.js";
import { siblingModule, spawnWorker } from "../../util/spawn_worker.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { Module } from "../module.js";
import { setNumThreads } from "../../backend/num_threads.js";
import { describeTensor, encodeModule, tensorOf, type TensorDesc } from "./replica_codec.js";

export interface DataParallelOptions {
  /** Replicas, the main thread's included (default 2): the batch is cut into this many pieces. */
  threads?: number;
  /** Module URLs exporting the model's own Module classes, for the worker threads to import. */
  classes?: readonly string[];
  /** How long the main thread waits for a replica (default 10 minutes). */
  timeoutMs?: number;
}

interface Replica {
  worker: Worker;
  port: MessagePort;
  slot: number;
  ready: boolean;
  /** The gradient piece a replica's backward reads: kept alive here until it answers. */
  grad: Tensor | null;
}

type Reply = { error?: { message: string; stack?: string }; output?: TensorDesc; grads?: (TensorDesc | null)[]; ready?: boolean };

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
 * replicas finish. The kernels' thread pool belongs to the process, and DataParallel sets it to
 * one thread (setNumThreads(1)): the replicas are the parallelism. The module takes one
 * tensor and returns one tensor. Replicas are rebuilt from the module's structure: ringtorch's nn
 * classes are known to the workers; classes of your own must be exported from files named in
 * `classes`. Forward hooks and parameters replaced after construction are not followed except
 * through `module.to()`-style storage changes, which are detected and re-sent.
 */
export class DataParallel extends Module {
  module: Module;
  private readonly threads: number;
  private readonly timeoutMs: number;
  private readonly classes: string[];
  private readonly flags = new Int32Array(new SharedArrayBuffer(4 * 64));
  private readonly replicas: Replica[] = [];
  private sentBuffers: SharedArrayBuffer[] = [];
  private backwardPending = new Set<Replica>();

  constructor(module: Module, options: DataParallelOptions = {}) {
    super();
    checkArity("DataParallel", arguments, 2, "new nn.DataParallel(module, { threads, classes, timeoutMs })");
    checkOptions("DataParallel", options, ["threads", "classes", "timeoutMs"]);
    if (!(module instanceof Module)) throw new TypeError(`DataParallel: expected a Module, got ${module === null ? "null" : typeof module}`);
    const threads = options.threads ?? 2;
    if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new RangeError(`DataParallel: threads must be an integer in 1..64, got ${threads}`);
    this.module = module;
    this.threads = threads;
    this.timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
    this.classes = [...(options.classes ?? [])];
    const encoded = encodeModule(module);
    // The kernels' pool is the process's: the replicas are the parallelism, one kernel thread each.
    setNumThreads(1);
    this.sentBuffers = this.parameterBuffers();
    for (let slot = 1; slot < threads; slot++) {
      const { port1, port2 } = new MessageChannel();
      const worker = spawnWorker(siblingModule(import.meta.url, "./worker"), {
        workerData: { port: port2, flags: this.flags, slot, module: encoded, classes: this.classes },
        transferList: [port2],
      });
      worker.unref();
      port1.unref();
      this.replicas.push({ worker, port: port1, slot, ready: false, grad: null });
    }
  }

  override forward(input: Tensor): Tensor {
    if (!(input instanceof Tensor)) throw new TypeError(`DataParallel: the input must be a Tensor (cut along dim 0), got ${typeof input}`);
    if (input.ndim === 0) throw new Error("DataParallel: the input needs a batch dimension to scatter, got a scalar");
    if (input.requiresGrad && this.replicas.length > 0) {
      throw new Error("DataParallel: an input that requires grad is not supported (its gradient would have to come back from the worker threads); detach it");
    }
    const n = input.shape[0]!;
    const pieces = Math.min(this.threads, Math.max(n, 1));
    const sizes = Array.from({ length: pieces }, (_, i) => Math.floor(n / pieces) + (i < n % pieces ? 1 : 0));
    const chunks = split(input, sizes, 0);
    const used = this.replicas.slice(0, pieces - 1);
    for (const r of used) this.ensureReady(r);
    this.resendIfReplaced(used);
    const grad = isGradEnabled();
    used.forEach((r, i) => this.post(r, { op: "forward", input: describeTensor(chunks[i + 1]!), training: this.module.training, grad }));
    let first: Tensor | undefined;
    let failure: unknown;
    try {
      first = this.module.call(chunks[0]!) as Tensor;
    } catch (error) {
      failure = error;
    }
    // Every answer is collected even when the main piece failed, so that none is left for the next call.
    const outputs = used.map((r) => this.receive(r, "forward"));
    if (failure !== undefined) throw failure;
    if (!(first instanceof Tensor)) throw new TypeError(`DataParallel: the module must return one tensor, got ${typeof first}`);
    const pieceOutputs = outputs.map((reply, i) => {
      const out = tensorOf(reply.output!);
      if (grad && first!.requiresGrad) out.gradFn = new Node("DataParallelBackward", [], (g) => this.startBackward(used[i]!, g), []);
      return out;
    });
    return cat([first!, ...pieceOutputs], 0);
  }

  /** Starts a replica's backward; the gradients are collected once the whole backward pass is done. */
  private startBackward(r: Replica, g: Tensor): [] {
    r.grad = clone(g);
    this.post(r, { op: "backward", grad: describeTensor(r.grad) });
    if (this.backwardPending.size === 0) queueCallback(() => this.collectGradients());
    this.backwardPending.add(r);
    return [];
  }

  private collectGradients(): void {
    const params = [...this.module.parameters()];
    const pending = [...this.backwardPending];
    this.backwardPending.clear();
    noGrad(() => {
      for (const r of pending) {
        const reply = this.receive(r, "backward");
        r.grad = null;
        reply.grads!.forEach((d, i) => {
          if (!d) return;
          const p = params[i]!;
          const g = tensorOf(d);
          if (p.grad) addInPlace(p.grad, g);
          else p.grad = clone(g);
        });
      }
    });
  }

  /** Sends the module again where a parameter's memory was replaced (module.to(), loadStateDict with assign). */
  private resendIfReplaced(used: readonly Replica[]): void {
    const now = this.parameterBuffers();
    if (now.length === this.sentBuffers.length && now.every((b, i) => b === this.sentBuffers[i])) return;
    const encoded = encodeModule(this.module);
    for (const r of used) this.post(r, { op: "module", module: encoded });
    for (const r of used) this.receive(r, "module update");
    this.sentBuffers = now;
  }

  private parameterBuffers(): SharedArrayBuffer[] {
    return [...this.module.parameters(), ...[...this.module.namedBuffers()].map(([, b]) => b)].map((t) => t.storage.data.buffer as SharedArrayBuffer);
  }

  private ensureReady(r: Replica): void {
    if (r.ready) return;
    this.receive(r, "start-up");
    r.ready = true;
  }

  private post(r: Replica, message: object): void {
    Atomics.store(this.flags, r.slot, 0);
    r.port.postMessage(message);
  }

  /** Blocks until replica `r` answers (its flag), then reads the answer off its port. */
  private receive(r: Replica, what: string): Reply {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`DataParallel: replica ${r.slot} (worker thread ${r.worker.threadId}) did not answer its ${what} within ${this.timeoutMs} ms`);
      if (Atomics.wait(this.flags, r.slot, 0, Math.min(left, 1000)) === "timed-out") continue;
      const message = receiveMessageOnPort(r.port);
      if (message === undefined) continue;
      Atomics.store(this.flags, r.slot, 0);
      const reply = message.message as Reply;
      if (reply.error) {
        const error = new Error(`DataParallel: replica ${r.slot} failed in its ${what}: ${reply.error.message}`);
        if (reply.error.stack) error.stack = `${error.message}\n    [in worker thread] ${reply.error.stack}`;
        throw error;
      }
      return reply;
    }
  }

  /** Ends the worker threads (they do not keep the process alive either way). */
  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.worker.terminate()));
    this.replicas.length = 0;
  }
}
