// node --import tsx --conditions=source bench/dataparallel.ts [--threads 2] [--steps 20] [--runs 6] [--warmup 300] [--only mlp|transformer] [--no-peer]
//
// nn.DataParallel in one process: training steps/s (forward, backward, SGD) of the MLP 784-1024-1024-10
// at batch 64 and of a small Transformer (2 encoder layers, d 64, 4 heads, sequence 32, batch 32),
// each run four ways on the same machine in this one run: one thread; intra-op threading with
// --threads kernel threads; DataParallel with --threads replicas (one kernel thread each), the loss
// on the gathered output as PyTorch does it; and DataParallel with the loss in the replicas
// (the criterion option and dp.forwardLoss(x, y)). The
// ratios are over one thread. The target: DataParallel >= 1.6x one thread on 2 cores for
// the Transformer, whose many small operations intra-op threading cannot split. PyTorch (the
// strongest peer here, bench/torch/dataparallel.py) runs the same models with 1 and --threads
// intra-op threads (its DataParallel on CPU runs replicas one after another).
import { performance } from "node:perf_hooks";
import * as rt from "../src/index.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";
import { threadCpuNs } from "../src/nn/data_parallel/profile.js";
import { TokenCrossEntropy } from "./workers/dp_loss.js";

const { nn, optim } = rt;
type Tensor = rt.Tensor;
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const threads = option("--threads", 2);
const steps = option("--steps", 20);
const runs = option("--runs", 6);
// Each replica's thread has a JIT of its own, which goes on compiling (on V8's background threads,
// taking the cores the replicas need) for a hundred steps and more: measured on the Transformer,
// DataParallel's process CPU per step was 1.4x one thread's after 40 steps of warm-up and 1.05x
// after 300. Every mode gets the same warm-up (300 steps) before it is timed.
const warmup = option("--warmup", 300);

interface Case {
  name: string;
  make(): { model: rt.nn.Module; x: Tensor; y: Tensor; lossFn: (o: Tensor, y: Tensor) => Tensor; criterion: rt.nn.Module };
}

const cases: Case[] = [
  {
    name: "mlp",
    make: () => ({
      model: new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)),
      x: rt.randn([64, 784]),
      y: rt.randint(0, 10, [64]),
      lossFn: (o, y) => nn.functional.crossEntropy(o, y),
      criterion: new nn.CrossEntropyLoss(),
    }),
  },
  {
    name: "transformer",
    make: () => {
      const layer = () => new nn.TransformerEncoderLayer(64, 4, { dimFeedforward: 128, dropout: 0, activation: "gelu", batchFirst: true });
      return {
        model: new nn.Sequential(layer(), layer(), new nn.Linear(64, 16)),
        x: rt.randn([32, 32, 64]),
        y: rt.randint(0, 16, [32, 32]),
        lossFn: (o, y) => nn.functional.crossEntropy(o.reshape(-1, 16), y.reshape(-1)),
        criterion: new TokenCrossEntropy(),
      };
    },
  },
];

interface Mode {
  name: "one" | "intra" | "dp" | "dpLoss";
  kernelThreads: number;
  /** The step's loss on the batch. */
  loss(x: Tensor, y: Tensor): Tensor;
  dp?: rt.nn.DataParallel;
}

interface Measured {
  /** Steps per second: the median over the rounds. */
  rate: number;
  /** The process's CPU ms per step (every thread: the replicas, V8's helpers, the kernels' pool). */
  cpuMs: number;
  /** The main thread's CPU ms per step. */
  mainCpuMs: number;
}

/**
 * The modes are timed in turns (one round: `steps` steps of each, the order rotated each
 * round), so that each sees the same machine: on a shared machine the load changes over seconds,
 * and timing the modes one after the other compared different machines. Every mode gets the same
 * warm-up first, also in turns.
 */
function measureInTurns(model: rt.nn.Module, modes: readonly Mode[], x: Tensor, y: Tensor): Measured[] {
  const opt = new optim.SGD(model.parameters(), { lr: 1e-3 });
  const stepsOf = (m: Mode, n: number) => {
    rt.setNumThreads(m.kernelThreads);
    for (let i = 0; i < n; i++) {
      opt.zeroGrad();
      m.loss(x, y).backward();
      opt.step();
    }
  };
  const block = 10;
  for (let done = 0; done < warmup; done += block) for (const m of modes) stepsOf(m, Math.min(block, warmup - done));
  for (const m of modes) m.dp?.resetProfile();
  const rates: number[][] = modes.map(() => []);
  const cpu = modes.map(() => ({ process: 0, main: 0 }));
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < modes.length; k++) {
      const i = (k + r) % modes.length;
      const cpu0 = process.cpuUsage();
      const main0 = threadCpuNs();
      const t0 = performance.now();
      stepsOf(modes[i]!, steps);
      rates[i]!.push((steps * 1000) / (performance.now() - t0));
      const used = process.cpuUsage(cpu0);
      cpu[i]!.process += (used.user + used.system) / 1000;
      cpu[i]!.main += (threadCpuNs() - main0) / 1e6;
    }
  }
  return modes.map((_, i) => ({ rate: median(rates[i]!), cpuMs: cpu[i]!.process / (runs * steps), mainCpuMs: cpu[i]!.main / (runs * steps) }));
}

/**
 * Where DataParallel's step goes: each thread's CPU per step, and the wall time of each phase. The
 * main thread's CPU is the bench's own count over DataParallel's turns (the profile's would also
 * count the other modes' turns, which ran on this thread in between).
 */
function describeProfile(name: string, p: rt.nn.DataParallelProfile, mainCpuMs: number): string {
  const phases = (w: Record<string, number>) => Object.entries(w).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
  return [
    `${name}: DataParallel over ${p.calls} steps, ms per step`,
    `  main thread   cpu ${mainCpuMs.toFixed(2)} | wall: ${phases(p.main.wallMs)}`,
    ...p.workers.map((w, i) => `  worker ${i + 1}      cpu ${w.cpuMs.toFixed(2)} | wall: ${phases(w.wallMs)}`),
  ].join("\n");
}

interface Result {
  one: Measured;
  intra: Measured;
  /** DataParallel with the loss on the gathered output, and with the loss in the replicas (forwardLoss). */
  dp: Measured;
  dpLoss: Measured;
  /** Each thread's CPU ms per step (main, workers), for dp and dpLoss. */
  dpThreadCpu: number[];
  dpLossThreadCpu: number[];
}
const results: Record<string, Result> = {};
const profiles: string[] = [];
// --only: one model (the Transformer, the target, takes about half the run's time).
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
if (only !== null && !cases.some((c) => c.name === only)) throw new RangeError(`--only: expected one of ${cases.map((c) => c.name).join(", ")}, got ${only}`);
for (const c of cases.filter((k) => only === null || k.name === only)) {
  rt.manualSeed(0);
  const { model, x, y, lossFn, criterion } = c.make();
  const dp = new nn.DataParallel(model, { threads, profile: true });
  const dpLoss = new nn.DataParallel(model, { threads, profile: true, criterion, classes: [new URL("./workers/dp_loss.ts", import.meta.url).href] });
  const plain = (o: Tensor, t: Tensor) => lossFn(o, t);
  const [one, intra, dpMeasured, dpLossMeasured] = measureInTurns(model, [
    { name: "one", kernelThreads: 1, loss: (a, b) => plain(model.call(a) as Tensor, b) },
    { name: "intra", kernelThreads: threads, loss: (a, b) => plain(model.call(a) as Tensor, b) },
    { name: "dp", kernelThreads: 1, loss: (a, b) => plain(dp.call(a), b), dp },
    { name: "dpLoss", kernelThreads: 1, loss: (a, b) => dpLoss.forwardLoss(a, b), dp: dpLoss },
  ], x, y);
  const p = dp.profile();
  const pl = dpLoss.profile();
  profiles.push(describeProfile(`${c.name}, loss on the gathered output`, p, dpMeasured!.mainCpuMs));
  profiles.push(describeProfile(`${c.name}, loss in the replicas (forwardLoss)`, pl, dpLossMeasured!.mainCpuMs));
  await dp.close();
  await dpLoss.close();
  results[c.name] = {
    one: one!, intra: intra!, dp: dpMeasured!, dpLoss: dpLossMeasured!,
    dpThreadCpu: [dpMeasured!.mainCpuMs, ...p.workers.map((w) => w.cpuMs)],
    dpLossThreadCpu: [dpLossMeasured!.mainCpuMs, ...pl.workers.map((w) => w.cpuMs)],
  };
}
rt.setNumThreads(1);

let peer: Record<string, { one: number; intra: number }> | null = null;
if (!args.includes("--no-peer")) {
  const p = findPeer();
  console.log(describePeer(p, threads));
  if (typeof p !== "string") {
    const at = (n: number) => JSON.parse(peerOutput(runPeer(p, [peerScript("dataparallel.py"), String(n), String(steps), String(runs)], n), "dataparallel.py").trim().split("\n").pop()!) as Record<string, number>;
    const [one, intra] = [at(1), at(threads)];
    peer = Object.fromEntries(Object.keys(one).map((k) => [k, { one: one[k]!, intra: intra[k]! }]));
  }
}

console.log(`\ntraining steps/s, ${threads} threads (ratios over one thread of the same side; last column: ringtorch DataParallel over PyTorch's best)`);
printTable(
  ["model", "rt 1 thread", `rt intra-op ${threads}`, "ratio", `rt DataParallel ${threads}`, "ratio", "rt DP, loss in replicas", "ratio", "torch 1 thread", `torch intra-op ${threads}`, "ratio", "rt DP best / torch best"],
  Object.entries(results).map(([name, { one, intra, dp, dpLoss }]) => {
    const p = peer?.[name];
    const best = Math.max(dp.rate, dpLoss.rate);
    return [name, one.rate, intra.rate, intra.rate / one.rate, dp.rate, dp.rate / one.rate, dpLoss.rate, dpLoss.rate / one.rate, p?.one ?? NaN, p?.intra ?? NaN, p ? p.intra / p.one : NaN, p ? best / Math.max(p.one, p.intra) : NaN];
  }),
);

// CPU per step says what each mode costs whatever else the machine runs: DataParallel's ideal is
// one thread's CPU (the same work, cut in pieces), with its wall time divided by the threads. The
// last column bounds DataParallel's speed-up from CPU alone: one thread's main-thread CPU over the
// busiest DataParallel thread's, what the wall-time ratio would be on cores nothing else uses and
// with no thread ever waiting for another (a wall ratio well below it on a quiet machine is time
// spent waiting; on a loaded one, time other processes took).
console.log("\nCPU ms per training step (ratios: over one thread)");
printTable(
  ["model", "rt 1 thread", `rt intra-op ${threads}`, "ratio", `rt DP ${threads}`, "ratio", "DP, loss in replicas", "ratio", "thread CPU: 1 thread", "DP (main, workers)", "1 thread / busiest", "DP loss in replicas", "1 thread / busiest"],
  Object.entries(results).map(([name, { one, intra, dp, dpLoss, dpThreadCpu, dpLossThreadCpu }]) => [
    name,
    one.cpuMs,
    intra.cpuMs,
    intra.cpuMs / one.cpuMs,
    dp.cpuMs,
    dp.cpuMs / one.cpuMs,
    dpLoss.cpuMs,
    dpLoss.cpuMs / one.cpuMs,
    one.mainCpuMs,
    dpThreadCpu.map((v) => v.toFixed(2)).join(", "),
    one.mainCpuMs / Math.max(...dpThreadCpu),
    dpLossThreadCpu.map((v) => v.toFixed(2)).join(", "),
    one.mainCpuMs / Math.max(...dpLossThreadCpu),
  ]),
);
console.log(`\n${profiles.join("\n")}`);
