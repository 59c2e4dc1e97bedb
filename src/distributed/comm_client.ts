import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from "node:worker_threads";
import {
  type AddressRef,
  type BufRef,
  CTL_DONE_POSTED,
  CTL_LENGTH,
  CTL_OPS_POSTED,
  type FromWorker,
  type OpMessage,
  type Request,
  type ToWorker,
  type WorkerConfig,
} from "./engine/messages.js";
import type { TransportKind } from "./engine/mesh.js";
import { CollectiveMismatchError } from "./engine/agreement.js";
import { TransferError } from "./engine/link.js";
import { isPointToPoint, p2pWire } from "./engine/messages.js";
import type { InlineRunner } from "./inline_runner.js";
import { tryLoadCommNative } from "./native.js";
import { siblingModule, spawnWorker } from "../util/spawn_worker.js";
import { DistributedError, Work } from "./work.js";
import { commStats } from "./comm_stats.js";
import { CommTraceRing, emitInline } from "./engine/trace_ring.js";
import { addTraceSource, commTraceTag, currentTraceRecorder, removeTraceSource, traceNow, tracing } from "../util/trace.js";

/** Extra time a blocked wait() allows past the operation's own timeout before it blames the worker. */
const WORKER_GRACE_MS = 60_000;

/**
 * The main thread's side of the communication worker: posts requests to it, and settles each
 * request's Work when the worker reports back. Neither the worker nor its port keeps the process
 * alive unless an operation is pending.
 */
export class CommClient {
  /** Operations the worker has not reported on, with the memory it may still be using (`keep`). */
  private readonly pending = new Map<number, { work: Work; timeoutMs: number; keep?: unknown }>();
  private nextId = 1;
  private readonly linkedSegments = new Set<string>();
  private failure: string | null = null;
  private closedResolve: (() => void) | null = null;
  private readonly onExit = () => this.cleanupAtExit();
  /** Set by init when synchronous collectives may run on the calling thread. */
  inline: InlineRunner | null = null;
  /** The addon the worker runs the transports on (the main thread only wakes it: post()). */
  private readonly native = tryLoadCommNative();

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly ctl: Int32Array,
    readonly handle: number,
    readonly transports: TransportKind[],
    private readonly traceRing: CommTraceRing,
  ) {}

  /** Starts the worker; `signal` stops it (and rejects) when another part of init has failed. */
  static start(config: WorkerConfig, signal?: AbortSignal): Promise<CommClient> {
    const { port1, port2 } = new MessageChannel();
    const ctlBuffer = new SharedArrayBuffer(4 * CTL_LENGTH);
    const url = siblingModule(import.meta.url, "./engine/comm_worker");
    // Always there, so that tracing can start at any time; the worker checks one flag per collective.
    const traceRing = CommTraceRing.create();
    const worker = spawnWorker(url, { workerData: { config, port: port2, ctl: ctlBuffer, traceRing: traceRing.buffer }, transferList: [port2] });
    const linked = new Set<string>();
    return new Promise((resolve, reject) => {
      const onSetupMessage = (msg: Exclude<FromWorker, number>) => {
        if (msg.type === "segment") {
          if (msg.linked) linked.add(msg.name);
          else linked.delete(msg.name);
          return;
        }
        port1.off("message", onSetupMessage);
        worker.off("error", onError);
        if (msg.type === "ready") {
          const client = new CommClient(worker, port1, new Int32Array(ctlBuffer), msg.handle, msg.transports, traceRing);
          for (const n of linked) client.linkedSegments.add(n);
          client.attach();
          resolve(client);
        } else {
          void worker.terminate();
          port1.close();
          reject(new DistributedError(msg.type === "setupError" ? msg.message : `unexpected message ${msg.type} from the comm worker`));
        }
      };
      const onError = (err: Error) => {
        port1.off("message", onSetupMessage);
        port1.close();
        reject(new DistributedError(`the communication worker failed to start: ${err.message}`));
      };
      port1.on("message", onSetupMessage);
      worker.once("error", onError);
      signal?.addEventListener("abort", () => {
        port1.off("message", onSetupMessage);
        port1.close();
        for (const name of linked) tryLoadCommNative()?.shmUnlink(name);
        void worker.terminate();
        reject(new DistributedError("initialisation was abandoned"));
      });
    });
  }

  /** Posts an operation; the returned Work settles when the worker reports on it. */
  submit(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    const work = new Work(description, (w) => this.blockTimed(w), onSettle, () => this.drain());
    if (this.failure !== null) {
      work.settle(this.failure);
      return work;
    }
    if (tracing.on && commTraceTag.current) msg = { ...msg, trace: commTraceTag.current };
    const id = this.nextId++;
    const { req, keep } = byAddress(msg);
    this.pending.set(id, { work, timeoutMs: msg.timeoutMs, keep });
    this.keepAlive(true);
    const op = { ...msg, req };
    this.post(p2pWire(id, op) ?? { type: "op", id, ...op });
    return work;
  }

  /**
   * Runs an operation the caller will block on: on this thread when the worker has nothing
   * queued (InlineRunner), else through the worker. Returns its Work, settled or pending.
   */
  runBlocking(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    if (!this.inline || this.pending.size > 0 || this.failure !== null || isPointToPoint(msg.req)) {
      return this.submit(msg, description, onSettle);
    }
    const outerStart = tracing.on ? traceNow() : 0;
    const t0 = performance.now();
    const op: OpMessage = { type: "op", id: 0, ...msg };
    const start = outerStart === 0 ? 0 : traceNow();
    const err = this.inline.run(op);
    const end = outerStart === 0 ? 0 : traceNow();
    commStats.waitMs += performance.now() - t0;
    this.port.postMessage({ type: "ran", group: msg.group, seq: msg.seq });
    const recorder = outerStart === 0 ? null : currentTraceRecorder();
    if (recorder) {
      if (commTraceTag.current) op.trace = commTraceTag.current;
      emitInline(recorder, { outerStart, start, end, outerEnd: traceNow(), msg: op, algorithm: this.inline.lastAlgorithm, failed: err !== null });
    }
    const work = new Work(description, (w) => this.blockTimed(w), onSettle, () => this.drain());
    if (err === null) {
      work.settle(null);
      return work;
    }
    if (err instanceof CollectiveMismatchError) {
      work.settle(err.message);
      return work;
    }
    // The worker writes the error (it can wait on the store for who never arrived) and closes the group.
    const status = err instanceof TransferError ? err.status : 5;
    const detail = err instanceof TransferError ? err.detail : String((err as Error)?.message ?? err);
    const id = this.nextId++;
    this.pending.set(id, { work, timeoutMs: msg.timeoutMs });
    this.keepAlive(true);
    this.post({ type: "explain", id, op: { type: "op", id, ...msg }, status, detail });
    return work;
  }

  addGroup(id: number, ranks: number[]): void {
    this.inline?.addGroup(id, ranks);
    this.post({ type: "group", id, ranks });
  }

  /** Stops the worker: pending operations are aborted, transports closed. */
  async shutdown(): Promise<void> {
    if (this.failure === null) this.failure = "the process group was destroyed";
    const closed = new Promise<void>((resolve) => (this.closedResolve = resolve));
    tryLoadCommNative()?.abort(this.handle);
    this.post({ type: "shutdown" });
    this.keepAlive(true);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000).unref())]);
    this.drain();
    for (const { work } of this.pending.values()) work.settle("the process group was destroyed before this operation finished");
    this.pending.clear();
    process.off("exit", this.onExit);
    removeTraceSource(this.traceRing);
    this.port.close();
    await this.worker.terminate();
  }

  private attach(): void {
    this.worker.unref();
    this.port.on("message", (m: FromWorker) => this.handle_(m));
    this.port.unref();
    this.worker.on("error", (err) => this.workerDied(`the communication worker crashed: ${err.message}`));
    this.worker.on("exit", () => this.workerDied("the communication worker exited"));
    process.on("exit", this.onExit);
    addTraceSource(this.traceRing);
  }

  /** While an operation is pending the process must not exit under an awaiting caller. */
  private keepAlive(on: boolean): void {
    if (on) {
      this.worker.ref();
      this.port.ref();
    } else {
      this.worker.unref();
      this.port.unref();
    }
  }

  private post(msg: ToWorker): void {
    this.port.postMessage(msg);
    Atomics.add(this.ctl, CTL_OPS_POSTED, 1);
    Atomics.notify(this.ctl, CTL_OPS_POSTED);
    // A worker inside a batch of sends and receives waits in native code, not on the ctl word:
    // this ends that wait, so a send posted now starts now (op_loop.ts, runPointToPoint).
    this.native?.notifyPosted(this.handle);
  }

  private handle_(msg: FromWorker): void {
    if (typeof msg === "number") return this.settle(msg, null, false);
    switch (msg.type) {
      case "done":
        return this.settle(msg.id, msg.error, msg.fatal === true);
      case "segment":
        if (msg.linked) this.linkedSegments.add(msg.name);
        else this.linkedSegments.delete(msg.name);
        return;
      case "closed":
        this.closedResolve?.();
        return;
      case "fatal":
        this.workerDied(msg.message);
        return;
      default:
        return;
    }
  }

  private settle(id: number, error: string | null, fatal: boolean): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.keepAlive(false);
    if (fatal && this.failure === null) this.failure = `the process group failed earlier and cannot be used: ${error}`;
    entry.work.settle(error);
  }

  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) this.handle_(m.message as FromWorker);
  }

  private blockTimed(work: Work): void {
    const t0 = performance.now();
    this.block(work);
    commStats.waitMs += performance.now() - t0;
  }

  /** wait(): sleeps on the shared doorbell the worker rings after each report. */
  private block(work: Work): void {
    const entry = [...this.pending.values()].find((e) => e.work === work);
    const limit = Date.now() + (entry?.timeoutMs ?? 0) + WORKER_GRACE_MS;
    while (!work.isCompleted()) {
      const seen = Atomics.load(this.ctl, CTL_DONE_POSTED);
      this.drain();
      if (work.isCompleted()) return;
      if (Date.now() > limit) {
        work.settle(`${work.description}: the communication worker did not report within its timeout; it may have crashed`);
        return;
      }
      Atomics.wait(this.ctl, CTL_DONE_POSTED, seen, 100);
    }
  }

  private workerDied(reason: string): void {
    if (this.failure === null) this.failure = reason;
    for (const { work } of this.pending.values()) work.settle(reason);
    this.pending.clear();
    this.keepAlive(false);
    this.closedResolve?.();
  }

  private cleanupAtExit(): void {
    const native = tryLoadCommNative();
    native?.abort(this.handle);
    for (const name of this.linkedSegments) native?.shmUnlink(name);
  }
}

/**
 * An all-reduce whose reduction is native code alone, and every send and receive, go to the worker
 * as addresses (AddressRef), so the worker holds no handle to the memory. Tensors are freed when
 * every thread holding a handle has collected it, and the worker collects rarely: DDP's fresh
 * gradients each step would otherwise pile up for gigabytes. A handle also costs the worker per
 * message: each SharedArrayBuffer that crosses the port becomes a new object in its heap, with its
 * external memory counted again (session 14's perf of a pipeline at m = 8 found a fifth of the
 * worker's CPU in compacting that heap). `keep` holds the memory alive until the worker reports done.
 */
function byAddress(msg: Omit<OpMessage, "id" | "type">): { req: Request; keep?: unknown } {
  const req = msg.req;
  const native = tryLoadCommNative();
  if (!native) return { req };
  const at = (b: BufRef | AddressRef): BufRef | AddressRef =>
    "data" in b ? { address: native.addressOf(b.data) + b.offset * b.data.BYTES_PER_ELEMENT, numel: b.numel } : b;
  if (isPointToPoint(req)) return { req: { ...req, buf: at(req.buf) }, keep: req.buf };
  if (req.kind !== "allReduce" || (msg.dtype === "bfloat16" && !req.lowPrecision)) return { req };
  return { req: { ...req, bufs: req.bufs.map(at) }, keep: req.bufs };
}
