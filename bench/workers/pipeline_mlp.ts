// One rank of bench/pipeline.ts (started by ringrun, or alone with no RANK for the unsplit model
// and for MODE=balance): a deep MLP (LAYERS blocks of Linear + ReLU, the first from IN = 784
// inputs as Fashion-MNIST's images, the others Linear(D, D), then Linear(D, 10)) trained with SGD
// on a fixed batch of B samples, split after block SPLIT into 2 stages and run by
// SCHEDULE ("gpipe" | "1f1b") over MICROBATCHES micro-batches (WHOLE_BACKWARD=1: without the
// schedules' inputGradientFirst). Prints RESULT with samples/s per
// run; each rank's compute time per step and bubble fraction over the pipeline's step (below)
// beside the ideal (p-1)/(m+p-1), and the schedule's own per-rank figure from back-to-back steps;
// and the activation memory this rank held at its peak (tensor-arena bytes above the step's start).
//
// The bubble of rank r over the pipeline's step: 1 - (rank r's compute time) / (the step's time),
// the step timed from a common start (a barrier before it) to the end of the last rank's last
// action (each rank's own step time, reduced with max). With balanced stages every rank then
// idles p-1 of the m+p-1 slots, so (p-1)/(m+p-1) is the right comparison for each rank.
//
// MODE=balance (one process): dist.pipelining.balanceByTime on one micro-batch (each child's
// forward and backward, process CPU time, robust to a shared machine), and prints the split whose
// slower stage is fastest with each child's and each stage's time.
import { readdirSync, readFileSync } from "node:fs";
import { constants, PerformanceObserver } from "node:perf_hooks";
import * as rt from "../../src/index.js";
import { tryLoadCommNative } from "../../src/distributed/native.js";
import { drainTraceSources, setTraceRecorder, type TraceRecorder } from "../../src/util/trace.js";
import type { CommSpan, TracedStep } from "../pipeline_idle.js";
import { median } from "../table.js";

const { nn, optim, dist } = rt;
if (process.env.PIPE_V8_FLAGS) (await import("node:v8")).setFlagsFromString(process.env.PIPE_V8_FLAGS);
const SCHEDULE = process.env.SCHEDULE ?? "1f1b";
const M = Number(process.env.MICROBATCHES ?? 4);
const [LAYERS, D, B] = [8, Number(process.env.WIDTH ?? 512), Number(process.env.BATCH ?? 256)];
// The first Linear reads a wider input so that the two halves do the same work: the first stage's
// input needs no gradient, so its first Linear costs a forward and a weight gradient (2·IN·D per
// sample) where every other block also computes its input's gradient (3·D·D); at IN = 1.5·D those
// agree, and 784 (a 28×28 image) is within 2% of it at D = 512. With IN = D the first stage did one
// product in twelve less than the second, which also has the head and the loss, so no split could
// make the stages equal and the bubble measured the model, not the schedule.
const IN = Number(process.env.IN_FEATURES ?? 784);
const SPLIT = Number(process.env.SPLIT ?? LAYERS / 2);
const STEPS = Number(process.env.STEPS ?? 10);
const RUNS = Number(process.env.RUNS ?? 3);
// 60 steps: V8 first optimizes a function that runs a few times a step only tens of steps in, on
// background threads that take the cores the two ranks compute on (at m = 8 the ranks' other
// threads used 6-9 ms of CPU per step after 5 steps, 1.4-5 after 60 in most runs: shared machine).
const WARMUP = Number(process.env.WARMUP ?? 60);
const BUBBLE_STEPS = Number(process.env.BUBBLE_STEPS ?? 10);
const TRACED_STEPS = Number(process.env.TRACED_STEPS ?? 5);

rt.manualSeed(0);
const layers: rt.nn.Module[] = [];
for (let i = 0; i < LAYERS; i++) layers.push(new nn.Sequential(new nn.Linear(i === 0 ? IN : D, D), new nn.ReLU()));
const model = new nn.Sequential(...layers, new nn.Linear(D, 10));
const x = rt.randn([B, IN]);
const y = rt.randn([B, 10]);
const lossFn = (out: rt.Tensor, target: rt.Tensor) => nn.functional.mseLoss(out, target);
/** [ms on a core, ms runnable but waiting for one] of the calling thread, or of all the process's other threads (Linux schedstat). */
const schedMs = (which: "main" | "comm" | "others"): [number, number] => {
  try {
    const read = (path: string) => readFileSync(path, "utf8").split(" ").slice(0, 2).map((v) => Number(v) / 1e6) as [number, number];
    if (which === "main") return read("/proc/thread-self/schedstat");
    // The main thread's id is the process's; the comm worker's, those that initProcessGroup started.
    return readdirSync("/proc/self/task")
      .filter((tid) => tid !== String(process.pid) && commTids.has(tid) === (which === "comm"))
      .map((tid) => read(`/proc/self/task/${tid}/schedstat`))
      .reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0]);
  } catch {
    return [NaN, NaN];
  }
};
// The main thread's CPU time (ms), taken between a schedule's actions: each action's CPU, which a
// loaded machine does not inflate the way it inflates wall time (time runnable but off a core is
// not in it). CLOCK_THREAD_CPUTIME_ID through the addon: schedstat moves only at a scheduler tick
// (4 ms here), as long as an action.
// An addon built before threadCpuNs gives NaN (the CPU columns read NaN), not a crash: rebuild it.
const native = tryLoadCommNative();
const threadCpuMs = (): number => (typeof native?.threadCpuNs === "function" ? native.threadCpuNs() / 1e6 : NaN);
/** The process's threads by id (Linux). */
const taskIds = (): string[] => {
  try {
    return readdirSync("/proc/self/task");
  } catch {
    return [];
  }
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

if (process.env.MODE === "balance") {
  // The API's balanceByTime: each child's forward + backward on one micro-batch (process CPU time,
  // the least of 7 rounds; on a shared machine other jobs only ever add to it), the cut whose
  // slower stage is fastest. Each split's stage times are sums of the children's.
  const mb = Math.ceil(B / M);
  const b = dist.pipelining.balanceByTime(model, x.narrow(0, 0, mb), { stages: 2, lossFn, target: y.narrow(0, 0, mb), rounds: 7 });
  const total = b.childMs.reduce((s, t) => s + t, 0);
  const per = Array.from({ length: LAYERS - 1 }, (_, i) => {
    const stage0Ms = b.childMs.slice(0, i + 1).reduce((s, t) => s + t, 0);
    return { split: i + 1, stage0Ms, stage1Ms: total - stage0Ms };
  });
  console.log("RESULT " + JSON.stringify({ microbatch: mb, best: Number(b.splitPoints[0]), childMs: b.childMs, stageMs: b.stageMs, per }));
  process.exit(0);
}

const distributed = process.env.RANK !== undefined;
const commTids = new Set<string>();
// The main thread's CPU at the start of the step and after each of its actions (afterAction).
const cpuMarks: number[] = [];
const gradientSentCpu = new Map<number, number>();
let step: () => void;
let timeline: () => rt.dist.pipelining.StepTimeline | null = () => null;
let ideal = 0;
if (!distributed) {
  const opt = new optim.SGD(model.parameters(), { lr: 1e-3 });
  step = () => {
    opt.zeroGrad();
    lossFn(model.call(x) as rt.Tensor, y).backward();
    opt.step();
  };
} else {
  const before = new Set(taskIds());
  await dist.initProcessGroup();
  // The threads the process group started: its communication worker (a Node worker thread).
  for (const tid of taskIds()) if (!before.has(tid)) commTids.add(tid);
  const rank = dist.getRank();
  if (dist.getWorldSize() !== 2) throw new Error("bench/workers/pipeline_mlp.ts runs 2 ranks (one split point, SPLIT)");
  const pipe = dist.pipelining.pipeline(model, { splitPoints: [String(SPLIT)] });
  const stage = pipe.buildStage(rank);
  // The main thread's CPU when each backward posts its gradient: how far into the backward's CPU
  // time the previous stage can go on (the simulation with CPU times, bench/pipeline_idle.ts).
  const sendGradient = stage.sendGradient.bind(stage);
  stage.sendGradient = (grad, mb) => {
    gradientSentCpu.set(mb ?? -1, threadCpuMs());
    return sendGradient(grad, mb);
  };
  const Schedule = SCHEDULE === "gpipe" ? dist.pipelining.ScheduleGPipe : dist.pipelining.Schedule1F1B;
  // WHOLE_BACKWARD=1: each backward computes its weight gradients before it sends its input's (the schedules' behaviour before inputGradientFirst), for A/B.
  const inputGradientFirst = process.env.WHOLE_BACKWARD !== "1";
  const sched = new Schedule(stage, { nMicrobatches: M, lossFn, lossScaling: "mean", inputGradientFirst, afterAction: () => cpuMarks.push(threadCpuMs()) });
  const opt = new optim.SGD(pipe.getStageModule(rank).parameters(), { lr: 1e-3 });
  // Gradients stay allocated between steps (zeroed, not dropped), so a step's extra held bytes are its activations.
  step = () => {
    opt.zeroGrad(false);
    cpuMarks.length = 0;
    gradientSentCpu.clear();
    cpuMarks.push(threadCpuMs());
    if (stage.isFirst) sched.step(x);
    else sched.step({ target: y });
    opt.step();
  };
  timeline = () => sched.lastTimeline;
  ideal = sched.idealBubbleFraction();
}

const busyOf = (t: rt.dist.pipelining.StepTimeline) => t.actions.reduce((s, a) => s + (a.end - a.start - a.waitMs), 0);
for (let i = 0; i < WARMUP; i++) step();
// PIPE_CPU_PROF=<dir>: a V8 CPU profile of each rank's main thread over the timed steps, written
// to <dir>/rank<r>.cpuprofile (node's --cpu-prof cannot go through ringrun to the ranks).
const profiler = process.env.PIPE_CPU_PROF ? new (await import("node:inspector")).Session() : null;
const post = (method: string) => new Promise<unknown>((resolve, reject) => profiler!.post(method, (err, res) => (err ? reject(err) : resolve(res))));
if (profiler) {
  profiler.connect();
  await post("Profiler.enable");
  await post("Profiler.start");
}
const rates: number[] = [];
const ownBubbles: number[] = [];
let activationBytes = 0;
for (let r = 0; r < RUNS; r++) {
  if (distributed) dist.barrier();
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const before = rt.memoryPool.stats()?.held ?? 0;
    step();
    const t = timeline();
    if (t) {
      ownBubbles.push(t.bubbleFraction);
      for (const a of t.actions) activationBytes = Math.max(activationBytes, (a.heldBytes ?? 0) - before);
    }
  }
  if (distributed) dist.barrier();
  rates.push((STEPS * B) / ((performance.now() - t0) / 1000));
}
// The bubble over the pipeline's step: a common start, and the step's time from the rank that ended last.
const bubbles: number[] = [];
const busy: number[] = [];
const stepMs: number[] = [];
// The process's CPU time per step over these steps: compute, plus what the comm thread spent
// (spinning or yielding while it waits is CPU the other rank's compute could have had on a full machine).
let cpuPerStepMs: number | null = null;
// The main thread's garbage-collection pauses in these steps (V8's own gc entries: a scavenge or
// full collection stops this rank's compute, and in a pipeline the peer waits for it too).
let gcPerStep: { ms: number; count: number; fullMs: number; fullCount: number } | null = null;
// Each action's compute (its time less its wait), by kind, over these steps: micro-batch 0 apart,
// since a first micro-batch slower than the rest is an unequal action time no split removes.
const actionMs = { F: [] as number[], B: [] as number[], F0: [] as number[], B0: [] as number[] };
const actionCpuMs = { F: [] as number[], B: [] as number[] };
let sched: { mainCpuMs: number; mainRunqueueMs: number; commCpuMs: number; othersCpuMs: number } | null = null;
if (distributed) {
  const cpu0 = cpuMs();
  const [main0, queue0] = schedMs("main");
  const others0 = schedMs("others")[0];
  const comm0 = schedMs("comm")[0];
  let gcMs = 0;
  let gcCount = 0;
  let fullMs = 0;
  let fullCount = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration;
      gcCount++;
      // detail.kind: perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR for a full collection.
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) [fullMs, fullCount] = [fullMs + e.duration, fullCount + 1];
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  for (let i = 0; i < BUBBLE_STEPS; i++) {
    dist.barrier();
    step();
    const t = timeline()!;
    const total = rt.tensor([t.totalMs]);
    dist.allReduce(total, { op: dist.ReduceOp.MAX });
    const w = total.item() as number;
    busy.push(busyOf(t));
    stepMs.push(w);
    bubbles.push(1 - busyOf(t) / w);
    for (const a of t.actions) (a.mb === 0 ? actionMs[`${a.kind}0`] : actionMs[a.kind]).push(a.end - a.start - a.waitMs);
    t.actions.forEach((a, j) => a.mb !== 0 && actionCpuMs[a.kind].push(cpuMarks[j + 1]! - cpuMarks[j]!));
  }
  cpuPerStepMs = (cpuMs() - cpu0) / BUBBLE_STEPS;
  const [main1, queue1] = schedMs("main");
  sched = {
    mainCpuMs: (main1 - main0) / BUBBLE_STEPS,
    mainRunqueueMs: (queue1 - queue0) / BUBBLE_STEPS,
    commCpuMs: (schedMs("comm")[0] - comm0) / BUBBLE_STEPS,
    othersCpuMs: (schedMs("others")[0] - others0) / BUBBLE_STEPS,
  };
  // The observer's entries arrive in a later task (after a timer, not after setImmediate): let them in before reading.
  await new Promise((resolve) => setTimeout(resolve, 20));
  gcObserver.disconnect();
  gcPerStep = { ms: gcMs / BUBBLE_STEPS, count: gcCount / BUBBLE_STEPS, fullMs: fullMs / BUBBLE_STEPS, fullCount: fullCount / BUBBLE_STEPS };
}
// Steps with the comm thread's spans recorded (when each message was picked up, handed over,
// arrived), for bench/pipeline_idle.ts to say where each rank's idle time went.
const traced: TracedStep[] = [];
if (distributed) {
  for (let i = 0; i < TRACED_STEPS; i++) {
    const comm: CommSpan[] = [];
    const recorder: TraceRecorder = {
      span: (tid, name, start, end, args) => {
        if (typeof args?.mb === "number" && (name.startsWith("send ") || name.startsWith("recv "))) comm.push({ name, mb: args.mb, start: (typeof args.postedUs === "number" ? args.postedUs : start) / 1000, end: end / 1000 });
      },
      instant: () => {},
    };
    dist.barrier();
    setTraceRecorder(recorder);
    step();
    drainTraceSources(recorder);
    setTraceRecorder(null);
    const t = timeline()!;
    traced.push({ origin: t.origin, totalMs: t.totalMs, actions: t.actions.map(({ heldBytes: _, ...a }, j) => {
        const sentCpu = a.kind === "B" ? gradientSentCpu.get(a.mb) : undefined;
        return { ...a, cpuMs: cpuMarks[j + 1]! - cpuMarks[j]!, ...(sentCpu !== undefined && { cpuBeforeSendMs: sentCpu - cpuMarks[j]! }) };
      }),
      comm,
    });
  }
}
const rank = distributed ? dist.getRank() : 0;
if (profiler) {
  const { profile } = (await post("Profiler.stop")) as { profile: unknown };
  (await import("node:fs")).writeFileSync(`${process.env.PIPE_CPU_PROF}/rank${rank}.cpuprofile`, JSON.stringify(profile));
}
console.log(
  "RESULT " +
    JSON.stringify({
      schedule: distributed ? SCHEDULE : "unsplit",
      m: M,
      rank,
      rates,
      bubble: bubbles.length ? median(bubbles) : null,
      ownBubble: ownBubbles.length ? median(ownBubbles) : null,
      busyMs: busy.length ? median(busy) : null,
      stepMs: stepMs.length ? median(stepMs) : null,
      cpuPerStepMs,
      sched,
      gcPerStep,
      actionMs: Object.fromEntries(Object.entries(actionMs).map(([k, v]) => [k, v.length ? median(v) : null])),
      actionCpuMs: Object.fromEntries(Object.entries(actionCpuMs).map(([k, v]) => [k, v.length ? median(v) : null])),
      ideal,
      activationMb: activationBytes / 2 ** 20,
      rssMb: process.resourceUsage().maxRSS / 1024,
      traced,
    }),
);
if (distributed) await dist.destroyProcessGroup();
