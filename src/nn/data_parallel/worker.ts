/**
 * One replica of a DataParallel module, on its own thread. It waits on its control words
 * (channel.ts) with Atomics.wait, runs the request, writes the answer into the shared buffers and
 * wakes the main thread, which is blocked in Atomics.wait itself: a step passes no message.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import * as rt from "../../index.js";
import { copyInPlace } from "../../ops/elementwise.js";
import { memoryPool } from "../../tensor/storage.js";
import { decodeModule } from "./replica_codec.js";
import * as ch from "./channel.js";
import { spinWhile } from "./spin.js";
import { ANSWERED_AT, PhaseClock, REQUESTED_AT, WORKER_PHASES } from "./profile.js";
import type { Module } from "../module.js";
import type { Parameter } from "../parameter.js";

interface Setup {
  port: MessagePort;
  ctrl: Int32Array;
  module: Parameters<typeof decodeModule>[0];
  /** The loss module of forwardLoss (DataParallel's criterion option), or null. */
  criterion: Parameters<typeof decodeModule>[0] | null;
  classes: string[];
  profile: Float64Array | null;
  /** DataParallel's spinMs option. */
  spinMs: number;
}

const setup = workerData as Setup;
const { port, ctrl } = setup;
const times = ch.timesOf(ctrl);
const clock = setup.profile ? new PhaseClock(setup.profile) : null;
const [FORWARD, COPY_OUTPUT, BACKWARD, IDLE_FOR_MAIN_BACKWARD, IDLE_BEFORE_FORWARD, IDLE_BEFORE_BACKWARD] = WORKER_PHASES.map((_, i) => i) as number[] as [number, number, number, number, number, number];
// One compute thread per replica: the replicas are the parallelism.
rt.setNumThreads(1);

/** Waiting longer than this without a request, the thread goes back to its event loop (Atomics.waitAsync). */
const WAIT_SYNC_MS = 20;
/** And at least this often between requests, so that V8's and Node's tasks for this thread run. */
const YIELD_EVERY_MS = 200;

let classes: Map<string, typeof rt.nn.Module>;
let replica: Module;
let criterion: Module | null = null;
let params: Parameter[] = [];
let gradViews: rt.Tensor[] = [];
let ready: Int32Array = new Int32Array(new SharedArrayBuffer(4));
/** The backward pass now running (ctrl[PASS]): what handOver marks a gradient ready with. */
let pass = 0;
let training = true;
let input: SharedArrayBuffer | null = null;
let target: SharedArrayBuffer | null = null;
let output: SharedArrayBuffer | null = null;
let outGrad: SharedArrayBuffer | null = null;
/** The output whose graph the next backward runs through. */
let graph: rt.Tensor | null = null;
let seen = 0;
let closed = false;
/** The last request ended with a backward (OP_BACKWARD, or a forward with F_BACKWARD), at this time (wallMs). */
let endedWithBackward = false;
let lastEndMs = 0;

function answer(message?: object): void {
  if (message) port.postMessage(message);
  ctrl[ch.STATUS] = message ? ((message as { error?: unknown }).error ? ch.S_ERROR : ch.S_MESSAGE) : ch.S_OK;
  if (clock) PhaseClock.stamp(setup.profile!, ANSWERED_AT);
  // For the main thread's balancer (balance.ts): when this replica finished.
  times[ch.ANSWERED_MS] = lastEndMs = ch.wallMs();
  Atomics.store(ctrl, ch.DONE, seen);
  Atomics.notify(ctrl, ch.DONE);
  // The arena's check of every block handed out, twice a step (a few µs): without it, the main
  // thread asked for 0.60 scavenges per step and this one 0.37 on the bench's Transformer; with it,
  // 0.29 and 0.31 (2026-12-07, one run each, loaded machine). The blocks the main thread's own
  // collections freed otherwise waited on the arena's rarely checked list of long-held blocks, and
  // its free lists ran dry: what keeps it stocked is these checks, whichever thread makes them.
  memoryPool.reclaim();
  clock?.addCpu();
  clock?.start();
}

/** What the main thread reads back of an error on this thread (data_parallel.ts's workerError). */
function errorReply(error: unknown): { error: { message: string; stack?: string } } {
  const e = error as Error;
  return { error: { message: e?.message ?? String(error), stack: e?.stack } };
}

function fail(error: unknown): void {
  answer(errorReply(error));
}

/** Builds the replica and the buffers its gradients are handed over in; the main thread gets the buffers. */
function build(encoded: Setup["module"]): object {
  replica = decodeModule(encoded, classes);
  training = replica.training;
  params = [...replica.parameters()];
  gradViews = params.map((p) => ch.tensorOver(new SharedArrayBuffer(ch.bytesFor(p.dtype, p.numel)), p.dtype, p.shape));
  ready = new Int32Array(new SharedArrayBuffer(4 * Math.max(1, params.length)));
  // Made once per parameter, at build: the hand-off of each gradient the moment backward has it.
  params.forEach((p, i) => p.registerPostAccumulateGradHook(() => handOver(i)));
  graph = null;
  return { grads: gradViews.map((g) => g.storage.data.buffer), ready };
}

/**
 * Parameter i's gradient is final for this pass (its post-accumulate hook): it goes into its
 * buffer and is marked ready at once, so that the main thread, done with its own piece, adds it into
 * `.grad` while this thread's backward goes on to the earlier layers, instead of adding every
 * gradient after both backward passes, while this thread idles before its next forward.
 */
function handOver(i: number): void {
  const p = params[i]!;
  const g = p.grad;
  if (!g) return;
  rt.noGrad(() => copyInPlace(gradViews[i]!, g));
  p.grad = null;
  // Nothing else holds a replica's gradient: its memory is reused by the next step at once.
  g.storage.release();
  Atomics.store(ready, i, pass);
}

/** The message the main thread left with this request (a new input buffer, a module to rebuild). */
function takeMessage(): { input?: SharedArrayBuffer; target?: SharedArrayBuffer; module?: Setup["module"] } {
  for (let tries = 0; ; tries++) {
    const m = receiveMessageOnPort(port);
    if (m) return m.message as { input?: SharedArrayBuffer; target?: SharedArrayBuffer; module?: Setup["module"] };
    if (tries > 1000) throw new Error("DataParallel: the main thread's message did not arrive with its request");
    ch.nap(1);
  }
}

function forward(): object | undefined {
  const x = ch.tensorOver(input!, ch.dtypeOf(ctrl[ch.IN_DTYPE]!), ch.readShape(ctrl, ch.IN_SHAPE, ch.IN_NDIM));
  const wantTraining = (ctrl[ch.FLAGS]! & ch.F_TRAINING) !== 0;
  if (wantTraining !== training) replica.train((training = wantTraining));
  graph = null;
  // Grad mode set around a direct call rather than a closure made per call (whose optimized code V8
  // drops at each full collection that finds none alive).
  const flags = ctrl[ch.FLAGS]!;
  const gradMode = rt.isGradEnabled();
  rt.setGradEnabled((flags & ch.F_GRAD) !== 0);
  let out: unknown;
  try {
    out = (flags & ch.F_LOSS) !== 0 ? withLoss(x) : replica.call(x);
  } finally {
    rt.setGradEnabled(gradMode);
  }
  clock?.lap(FORWARD);
  if (!(out instanceof rt.Tensor)) throw new Error(`DataParallel: the module must return one tensor, got ${typeof out}`);
  graph = out.requiresGrad ? out : null;
  let message: object | undefined;
  const bigger = ch.grown(output, ch.bytesFor(out.dtype, out.numel));
  if (bigger) {
    output = bigger;
    outGrad = new SharedArrayBuffer(bigger.byteLength);
    message = { output, outGrad };
  }
  rt.noGrad(() => copyInPlace(ch.tensorOver(output!, out.dtype, out.shape), out.detach()));
  ctrl[ch.OUT_DTYPE] = ch.dtypeCode(out.dtype);
  ch.writeShape(ctrl, ch.OUT_SHAPE, ch.OUT_NDIM, out.shape, "output");
  clock?.lap(COPY_OUTPUT);
  return message;
}

/** The replica's forward followed by the criterion on this piece of the target (forwardLoss): the output is the piece's loss. */
function withLoss(x: rt.Tensor): unknown {
  if (!criterion) throw new Error("DataParallel: forwardLoss reached a replica without a criterion");
  const y = ch.tensorOver(target!, ch.dtypeOf(ctrl[ch.TGT_DTYPE]!), ch.readShape(ctrl, ch.TGT_SHAPE, ch.TGT_NDIM));
  return criterion.call(replica.call(x), y) as unknown;
}

/**
 * The backward of a forward that carried F_BACKWARD (forwardLoss with grad), run as soon as the
 * forward is answered rather than when the main thread's backward reaches this replica's loss:
 * the worker would otherwise idle through the rest of the main thread's forward, its loss and the
 * start of its backward. Its seed is 1; the gradient the loss gets in the end (its share of the
 * batch, or whatever the caller's backward gives it) scales the gradients when the main thread adds
 * them up, as gradients are linear in the seed. Ends with BACKWARD_DONE set to `p`, whether or not
 * there was a graph (evaluation, a failed forward), so that the main thread's wait always ends.
 */
function backwardAtOnce(p: number): void {
  let status = ch.S_OK;
  try {
    if (graph) {
      const root = graph;
      graph = null;
      pass = p;
      root.backward();
    }
  } catch (error) {
    port.postMessage(errorReply(error));
    status = ch.S_ERROR;
  }
  clock?.lap(BACKWARD);
  times[ch.BACKWARD_MS] = lastEndMs = ch.wallMs();
  if (clock) PhaseClock.stamp(setup.profile!, ANSWERED_AT);
  ctrl[ch.BACKWARD_STATUS] = status;
  Atomics.store(ctrl, ch.BACKWARD_DONE, p);
  Atomics.notify(ctrl, ch.BACKWARD_DONE);
  memoryPool.reclaim(); // as at an answer (answer())
}

function backward(): void {
  if (!graph) throw new Error("DataParallel: backward reached a replica without a recorded forward");
  const root = graph;
  graph = null;
  pass = ctrl[ch.PASS]!;
  // Each parameter's gradient is handed over by its hook (handOver) as the pass reaches it.
  root.backward(ch.tensorOver(outGrad!, root.dtype, root.shape));
  clock?.lap(BACKWARD);
}

/**
 * Ends this thread's idle phase on the profile clock. Before a forward that follows a backward, the
 * part of the idle until the main thread's own backward ended (it writes when: MAIN_BACKWARD_MS,
 * on the clock this thread answered on) is the main thread still computing, not its serial part.
 */
function profileIdle(clock: PhaseClock, op: number): void {
  if (op === ch.OP_BACKWARD) {
    clock.lap(IDLE_BEFORE_BACKWARD);
    return;
  }
  clock.lap(IDLE_BEFORE_FORWARD);
  const ahead = times[ch.MAIN_BACKWARD_MS]! - lastEndMs;
  if (endedWithBackward && ahead > 0) clock.move(IDLE_BEFORE_FORWARD, IDLE_FOR_MAIN_BACKWARD, ahead * 1e6);
}

/** Runs one request; false once the main thread has closed this replica. */
function handle(): boolean {
  const op = ctrl[ch.OP]!;
  if (clock) profileIdle(clock, op);
  if (clock && waited) clock.woke(setup.profile!, REQUESTED_AT);
  waited = false;
  // Read before the answer: the main thread may write its next request's words once it has it.
  const backwardPass = op === ch.OP_FORWARD && (ctrl[ch.FLAGS]! & ch.F_BACKWARD) !== 0 ? ctrl[ch.PASS]! : 0;
  try {
    let message: object | undefined;
    if (ctrl[ch.FLAGS]! & ch.F_PORT) {
      const m = takeMessage();
      if (m.input) input = m.input;
      if (m.target) target = m.target;
      if (m.module) message = build(m.module);
    }
    if (op === ch.OP_CLOSE) {
      closed = true;
      clearInterval(keepAlive);
      port.close();
      return false;
    }
    if (op === ch.OP_FORWARD) message = forward();
    else if (op === ch.OP_BACKWARD) backward();
    answer(message);
  } catch (error) {
    fail(error);
  }
  if (backwardPass !== 0) backwardAtOnce(backwardPass);
  endedWithBackward = op === ch.OP_BACKWARD || backwardPass !== 0;
  return true;
}

// Waiting in Atomics.waitAsync holds no handle: this keeps the thread's event loop from ending.
const keepAlive = setInterval(() => {}, 1 << 30);
let lastYield = performance.now();
/** This thread blocked (or went back to its event loop) before the request now taken: its wake-up is profiled. */
let waited = false;
function loop(): void {
  waited = true;
  for (;;) {
    const cmd = Atomics.load(ctrl, ch.CMD);
    if (cmd !== seen) {
      seen = cmd;
      if (!handle()) return;
      continue;
    }
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      lastYield = performance.now();
      setImmediate(loop);
      return;
    }
    if (spinWhile(ctrl, ch.CMD, seen, setup.spinMs)) continue;
    const woken = Atomics.wait(ctrl, ch.CMD, seen, WAIT_SYNC_MS);
    if (woken === "ok") waited = true;
    if (woken === "timed-out") {
      lastYield = performance.now();
      const waiting = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<unknown> | string } }).waitAsync(ctrl, ch.CMD, seen);
      if (waiting.async) void (waiting.value as Promise<unknown>).then(loop);
      else setImmediate(loop);
      return;
    }
  }
}

async function classRegistry(): Promise<Map<string, typeof rt.nn.Module>> {
  const found = new Map<string, typeof rt.nn.Module>();
  const add = (ns: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(ns)) {
      if (typeof value === "function" && value.prototype instanceof rt.nn.Module) found.set(name, value as typeof rt.nn.Module);
    }
  };
  add(rt.nn as unknown as Record<string, unknown>);
  for (const url of setup.classes) {
    // Run from TypeScript sources, this thread has tsx's require hook but not its ESM loader.
    const ns = url.endsWith(".ts") ? (createRequire(import.meta.url)(fileURLToPath(url)) as Record<string, unknown>) : ((await import(url)) as Record<string, unknown>);
    add(ns);
  }
  return found;
}

// A failure anywhere is answered, so the main thread never waits out its timeout for a dead replica.
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
process.on("exit", () => {
  if (closed) return;
  Atomics.store(ctrl, ch.EXITED, 1);
  // A request not yet answered is answered "exited"; one answered stays answered (the main thread
  // may not have read it yet), and the main thread finds EXITED at its next wait.
  const cmd = Atomics.load(ctrl, ch.CMD);
  if (Atomics.load(ctrl, ch.DONE) !== cmd) {
    ctrl[ch.STATUS] = ch.S_EXITED;
    Atomics.store(ctrl, ch.DONE, cmd);
  }
  Atomics.notify(ctrl, ch.DONE);
  // The same for a backward run at once (F_BACKWARD): its PASS is the one the main thread waits for,
  // as it sends no other request to this replica until that backward is waited for.
  const pass = ctrl[ch.PASS]!;
  if (Atomics.load(ctrl, ch.BACKWARD_DONE) !== pass) {
    ctrl[ch.BACKWARD_STATUS] = ch.S_EXITED;
    Atomics.store(ctrl, ch.BACKWARD_DONE, pass);
  }
  Atomics.notify(ctrl, ch.BACKWARD_DONE);
});
// No top-level await: from sources this file is loaded through tsx's CommonJS hook.
void classRegistry()
  .then((found) => {
    classes = found;
    // The start-up request (CMD 1, set before this thread started) is answered with the gradient buffers.
    seen = Atomics.load(ctrl, ch.CMD);
    criterion = setup.criterion ? decodeModule(setup.criterion, classes) : null;
    answer(build(setup.module));
    loop();
  })
  .catch((error: unknown) => {
    seen = Atomics.load(ctrl, ch.CMD);
    fail(error);
  });
