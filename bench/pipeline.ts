// node --import tsx --conditions=source bench/pipeline.ts [--microbatches 2,4,8] [--split K] [--no-peer] [--no-whole]
//
// Pipeline parallelism on 2 ranks of one thread each: a deep MLP (8 blocks of Linear + ReLU, the
// first Linear(784, 512) and the others Linear(512, 512), then Linear(512, 10)), SGD, batch 256 (bench/workers/pipeline_mlp.ts), under GPipe and 1F1B
// for each micro-batch count, 1F1B twice, interleaved: as the schedules run it (each backward sends
// its input's gradient before it computes its weight gradients) and with each backward whole
// ("1f1b, whole B", as before inputGradientFirst; --no-whole leaves it out); the ranks inherit
// NODE_OPTIONS (NODE_OPTIONS=--no-node-snapshot, for A/B of V8's scavenge cost); beside it the same model unsplit in one process, and PyTorch's
// torch.distributed.pipelining over gloo (bench/torch/pipeline.py) with the same schedules and split,
// run by the peer bench/peer.ts chooses. The split is chosen first by dist.pipelining.balanceByTime
// (each child's forward and backward on one micro-batch, CPU time): the one whose slower stage is
// fastest, printed with each stage's time (--split K forces one). For ringtorch also each rank's compute time per step and
// bubble over the pipeline's step (1 - compute / step time, from a common start to the last rank's
// end; median over steps) beside the ideal (p-1)/(m+p-1), the schedule's own per-rank figure from
// back-to-back steps, and the memory rank 0 held at its peak (tensor-arena bytes above the step's
// start, garbage not yet collected included: test/distributed/pipeline_memory.test.ts measures the
// activations exactly). Then where each rank's idle time went, from a few traced steps (the schedule's
// timeline and the comm thread's spans on the host's common clock; bench/pipeline_idle.ts), the bubble
// of that step simulated with free messages, once with the actions' measured times and once with
// their main-thread CPU times (what a core free for every thread would give: on a loaded machine the
// figure to hold against the ideal), and per step each rank's main-thread CPU, its time waiting for
// a core (contention), its comm worker's CPU (also per transfer) and its other threads' CPU.
//
// The model's first Linear reads 784 inputs (a 28×28 image) so that the two halves can be equal
// (bench/workers/pipeline_mlp.ts says why); IN_FEATURES=512 gives the earlier model, for A/B.
import { execFileSync } from "node:child_process";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { type IdleBreakdown, idleBreakdown, medianStep, type TracedStep } from "./pipeline_idle.js";
import { median, printTable } from "./table.js";

const args = process.argv.slice(2);
const MICROBATCHES = (args.includes("--microbatches") ? args[args.indexOf("--microbatches") + 1]! : "2,4,8").split(",").map(Number);

interface RankResult {
  schedule: string;
  rank: number;
  rates: number[];
  bubble: number | null;
  ownBubble: number | null;
  busyMs: number | null;
  stepMs: number | null;
  ideal: number;
  activationMb: number;
  rssMb: number;
  traced: TracedStep[];
  /** Per step (Linux schedstat): the main thread's CPU, its time runnable but waiting for a core, and the other threads' CPU (the comm worker's, GC's). */
  sched: { mainCpuMs: number; mainRunqueueMs: number; commCpuMs: number; othersCpuMs: number } | null;
  /** Per step, the main thread's garbage-collection pauses (V8's gc entries). */
  gcPerStep: { ms: number; count: number; fullMs: number; fullCount: number } | null;
  /** Median compute ms of a forward (F) and a backward (B), micro-batch 0 apart (F0, B0). */
  actionMs: Record<"F" | "B" | "F0" | "B0", number | null>;
  /** Median CPU ms of the main thread over a forward (F) and a backward (B), micro-batch 0 left out. */
  actionCpuMs: Record<"F" | "B", number | null>;
}

const worker = "bench/workers/pipeline_mlp.ts";
const parse = (out: string): RankResult[] =>
  out
    .split("\n")
    .filter((l) => l.includes("RESULT "))
    .map((l) => JSON.parse(l.slice(l.indexOf("RESULT ") + 7)) as RankResult)
    .sort((a, b) => a.rank - b.rank);

interface Balance {
  microbatch: number;
  best: number;
  childMs: number[];
  stageMs: number[];
  per: { split: number; stage0Ms: number; stage1Ms: number }[];
}

/** balanceByTime's split for micro-batches of batch / m (one process, CPU time). */
function balance(m: number): Balance {
  const env = { ...process.env, RINGTORCH_NUM_THREADS: "1", MODE: "balance", MICROBATCHES: String(m) };
  const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=source", worker], { env }).toString();
  return JSON.parse(out.slice(out.indexOf("RESULT ") + 7)) as Balance;
}

let split = args.includes("--split") ? Number(args[args.indexOf("--split") + 1]) : NaN;
if (Number.isNaN(split)) {
  const b = balance(Math.max(...MICROBATCHES));
  console.log(`dist.pipelining.balanceByTime on a micro-batch of ${b.microbatch} (each child's forward + backward, process CPU ms, least of 7 rounds): children ${b.childMs.map((t) => t.toFixed(2)).join(", ")} (the head's with the loss)`);
  console.log("  stage 0 / stage 1 by split point: " + b.per.map((p) => `${p.split}: ${p.stage0Ms.toFixed(1)} / ${p.stage1Ms.toFixed(1)}`).join(", "));
  console.log(`  balanceByTime's split: after block ${b.best}, stages ${b.stageMs.map((t) => t.toFixed(1)).join(" / ")} ms`);
  split = b.best;
}
console.log(`split after block ${split}: stage 0 has blocks 0..${split - 1}, stage 1 blocks ${split}..7 and the head`);

function ringtorch(schedule: string, m: number, wholeBackward = false): RankResult[] {
  const env = { ...process.env, RINGTORCH_NUM_THREADS: "1", SCHEDULE: schedule, MICROBATCHES: String(m), SPLIT: String(split), WHOLE_BACKWARD: wholeBackward ? "1" : "0" };
  const out =
    schedule === "unsplit"
      ? execFileSync(process.execPath, ["--import", "tsx", "--conditions=source", worker], { env }).toString()
      : execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", worker], { env }).toString();
  const results = parse(out);
  if (results.length !== (schedule === "unsplit" ? 1 : 2)) throw new Error(`bench/pipeline: no result from ringtorch ${schedule} m=${m}:\n${out}`);
  return results;
}

// Each backward sends its input's gradient before computing its weight gradients (the schedules'
// default, inputGradientFirst); "whole B" rows run each backward whole, as before, interleaved
// with them in the same run (--no-whole leaves them out).
const VARIANTS = [
  { label: "gpipe", schedule: "gpipe", wholeBackward: false },
  ...(args.includes("--no-whole") ? [] : [{ label: "1f1b, whole B", schedule: "1f1b", wholeBackward: true }]),
  { label: "1f1b", schedule: "1f1b", wholeBackward: false },
];
// The ranks inherit NODE_OPTIONS (NODE_OPTIONS=--no-node-snapshot for V8's cheaper scavenges, for A/B).
console.log(`ranks' NODE_OPTIONS: ${process.env.NODE_OPTIONS ?? "(none)"}`);

const peer = args.includes("--no-peer") ? "not asked for (--no-peer)" : findPeer();
console.log(describePeer(peer, 1));

function torch(schedule: string, m: number): number {
  if (typeof peer === "string") return NaN;
  const r = runPeer(peer, [peerScript("pipeline.py"), schedule, String(m)], 1, { SPLIT: String(split) });
  if (r.status !== 0) {
    console.log(`PyTorch ${schedule} m=${m} failed: ${r.stderr.trim().split("\n").slice(-2).join(" / ")}`);
    return NaN;
  }
  // Ranks print at once, so their lines may run together: match records, not lines.
  const rank0 = [...r.stdout.matchAll(/rank=(\d+) \S+ samples\/s runs=\[[^\]]*\] median=(\d+)/g)].find((x) => x[1] === "0");
  return rank0 ? Number(rank0[2]) : NaN;
}

const rows: (string | number)[][] = [];
const idleRows: (string | number)[][] = [];
const unsplit = ringtorch("unsplit", 1)[0]!;
const torchUnsplit = torch("unsplit", 1);
rows.push(["unsplit, 1 process", "-", median(unsplit.rates), torchUnsplit, median(unsplit.rates) / torchUnsplit, "-", "-", "-", "-", "-", "-", unsplit.rssMb]);
for (const m of MICROBATCHES) {
  let gpipeActivation = NaN;
  const theirs = new Map<string, number>();
  for (const variant of VARIANTS) {
    const { schedule, wholeBackward } = variant;
    const [r0, r1] = ringtorch(schedule, m, wholeBackward);
    // PyTorch once per schedule (its backward is always whole), beside the variant without "whole".
    if (!theirs.has(schedule)) theirs.set(schedule, torch(schedule, m));
    const label = variant.label;
    const rate = median(r0!.rates);
    if (schedule === "gpipe" && !wholeBackward) gpipeActivation = r0!.activationMb;
    const perStep = r0!.traced.map((_, i) => idleBreakdown([r0!.traced[i]!, r1!.traced[i]!], m));
    // Over every traced step, not the median step's alone: CPU times vary less than wall times, but a scavenge still lands in one action or another.
    const cpuBubbles = (rank: number) => {
      const v = perStep.map((s) => s[rank]!.cpuSimulatedBubble);
      return `${median(v).toFixed(2)} (${Math.min(...v).toFixed(2)}-${Math.max(...v).toFixed(2)})`;
    };
    if (perStep.length > 0) {
      medianStep(perStep).forEach((b: IdleBreakdown, rank) => {
        const ms = (v: number) => v.toFixed(1);
        const { sched, gcPerStep, actionMs, actionCpuMs, ideal } = [r0, r1][rank]!;
        const simulatedMs = b.computeMs + b.slotsMs + b.imbalanceMs;
        idleRows.push([
          label, String(m), String(rank), ms(b.stepMs), ms(b.computeMs), ms(b.idleMs), ms(b.slotsMs), ms(b.imbalanceMs), ms(b.excessMs),
          ms(b.peerLateMs), ms(b.pickupMs), ms(b.transferMs), ms(b.noticeMs), ms(b.outsideMs), (1 - b.computeMs / b.stepMs).toFixed(2),
          (1 - b.computeMs / simulatedMs).toFixed(2), cpuBubbles(rank), ideal.toFixed(2),
          `${ms(actionMs.F ?? NaN)} / ${ms(actionMs.B ?? NaN)} (${ms(actionMs.F0 ?? NaN)} / ${ms(actionMs.B0 ?? NaN)})`,
          `${ms(actionCpuMs?.F ?? NaN)} / ${ms(actionCpuMs?.B ?? NaN)}`,
          gcPerStep ? `${ms(gcPerStep.ms)} (${gcPerStep.count.toFixed(1)}); full ${ms(gcPerStep.fullMs)} (${gcPerStep.fullCount.toFixed(1)})` : "n/a",
          sched ? `${ms(sched.mainCpuMs)} / ${ms(sched.mainRunqueueMs)} / ${ms(sched.commCpuMs)} / ${ms(sched.othersCpuMs)}` : "n/a",
          // Each rank sends m messages a step and receives m (an activation is one message from the second step on).
          sched ? ((sched.commCpuMs * 1000) / (2 * m)).toFixed(0) : "n/a",
        ]);
      });
    }
    const f = (v: number | null) => (v ?? NaN).toFixed(2);
    rows.push([
      label, String(m), rate, theirs.get(schedule)!, rate / theirs.get(schedule)!, r0!.ideal, `${f(r0!.bubble)} / ${f(r1!.bubble)}`, `${f(r0!.ownBubble)} / ${f(r1!.ownBubble)}`,
      `${(r0!.busyMs ?? NaN).toFixed(1)} / ${(r1!.busyMs ?? NaN).toFixed(1)} of ${(r0!.stepMs ?? NaN).toFixed(1)}`,
      `${r0!.activationMb.toFixed(1)} (${(r0!.activationMb / gpipeActivation).toFixed(2)}× GPipe)`, Math.max(r0!.rssMb, r1!.rssMb),
    ]);
  }
}
console.log(`deep MLP Linear(${process.env.IN_FEATURES ?? 784},512)+ReLU, 7×Linear(512,512)+ReLU → Linear(512,10), SGD, batch 256, 2 stages × 1 thread (split after block ${split}): samples/s`);
printTable(
  [
    "schedule", "micro-batches", "ringtorch", "PyTorch", "ringtorch / PyTorch", "ideal bubble", "bubble rank 0 / 1", "own-window bubble 0 / 1",
    "compute ms 0 / 1 of step ms", "activations rank 0 (MB)", "peak RSS (MB)",
  ],
  rows,
);
console.log(
  "where each rank's idle time went (bench/pipeline_idle.ts; ms, the traced step of median step time): idle = step - compute = " +
    "(a) the schedule's slots + (d) unequal action times + what messages and the machine added (step - simulated step); " +
    "and by what each wait waited on: the peer not yet sending, its comm thread not yet picking the send up, the transfer, the waiting thread not yet resumed, and idle outside any wait. " +
    "Then the bubble the step would have with these measured action times and free messages (the simulation: what the split and unequal micro-batches leave, against the ideal that assumes equal stages), " +
    "the same with each action's CPU time instead of its wall time (what a core free for every thread would give: the figure to hold against the ideal on a loaded machine), " +
    "and, over the untraced steps, each rank's median forward / backward compute ms (micro-batch 0's in brackets) and CPU ms (micro-batch 0 left out), its main thread's GC pauses per step (ms, and how many; all, then full collections alone), " +
    "and (Linux schedstat) the main thread's CPU, its time runnable but kept off a core by other threads and processes (contention), the comm worker's CPU, and the process's other threads' CPU (V8's GC and compiler helpers, libuv); " +
    "last, the comm worker's CPU per transfer (2m a step per rank: each activation and each gradient one message; bench/workers/pipeline_p2p.ts measures it without compute)",
);
printTable(
  [
    "schedule", "micro-batches", "rank", "step", "compute", "idle", "(a) slots", "(d) unequal times", "added by messages",
    "wait: peer not sent", "wait: pickup", "wait: transfer", "wait: notice", "outside waits", "traced bubble", "bubble, measured times, free messages",
    "bubble, CPU times, free messages: median (range) of traced steps", "ideal", "F / B ms (mb 0)", "F / B CPU ms", "GC pauses per step: all, full: ms (n)", "per step: main CPU / waiting for a core / comm worker CPU / other threads' CPU",
    "comm worker CPU per transfer (µs)",
  ],
  idleRows,
);
