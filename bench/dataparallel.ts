// node --import tsx --conditions=source bench/dataparallel.ts [--threads 2] [--steps 20] [--runs 10] [--warmup 1000] [--rounds 3] [--only mlp|transformer] [--no-peer] [--no-balance] [--spin-ms 2]
// (--no-balance and --spin-ms: DataParallel's balance and spinMs options, to compare against its defaults)
// (node's options before the file, V8 flags included, apply to every ringtorch process it starts)
//
// nn.DataParallel in one process: training steps/s (forward, backward, SGD) of the MLP 784-1024-1024-10
// at batch 64 and of a small Transformer (2 encoder layers, d 64, 4 heads, sequence 32, batch 32),
// each run four ways: one thread; intra-op threading with --threads kernel threads; DataParallel
// with --threads replicas (one kernel thread each), the loss on the gathered output as PyTorch does
// it; and DataParallel with the loss in the replicas (the criterion option and dp.forwardLoss(x, y)).
// The ratios are over one thread. The issue's target: DataParallel >= 1.6x one thread on 2 cores
// for the Transformer, whose many small operations intra-op threading cannot split. PyTorch (the
// strongest peer here, bench/torch/dataparallel.py) runs the same models with 1 and --threads
// intra-op threads (its DataParallel on CPU runs replicas one after another).
//
// Every mode of either side runs in a fresh process of its own, as a user runs it: timed in one
// process with the other modes in between, DataParallel's threads cost 1-3 ms more CPU per step than
// alone (the JIT's code for the main thread, shared by the modes, and the allocator's state were
// the other modes' too). A round starts ringtorch's four processes side by side, warms them up one
// after another, then times them in alternated chunks of --steps steps (workers/dp_chunks.ts), so
// that each DataParallel chunk has a one-thread chunk beside it in time: a round's ratio is the
// median of those pairs, which the machine's drift between two whole runs (±10% on this VM) does
// not move. PyTorch's processes run before or after that block, alternately.
import { fileURLToPath } from "node:url";
import { constants, performance, PerformanceObserver } from "node:perf_hooks";
import * as rt from "../src/index.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer, type Peer } from "./peer.js";
import { median, printTable } from "./table.js";
import { lastThreadRunDelayNs, threadCpuNs } from "../src/nn/data_parallel/profile.js";
import { TokenCrossEntropy } from "./workers/dp_loss.js";
import { ChunkedChild, serveChunks } from "./workers/dp_chunks.js";

const { nn, optim } = rt;
type Tensor = rt.Tensor;
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const threads = option("--threads", 2);
const steps = option("--steps", 20);
const runs = option("--runs", 10);
const rounds = option("--rounds", 3);
// Each replica's thread has a JIT of its own. V8 optimizes a function once it has used up a budget
// of interpreted bytecode a few times over, so a function called a few times a step (a module's
// forward, an op's backward closure, DataParallel's own hand-off code) is first optimized hundreds
// of steps in, on V8's background threads, which take the cores the replicas need: on the
// Transformer (2026-11-28, traced with --trace-opt), DataParallel's two isolates completed 47, 38,
// 31, 19, 11 TurboFan compiles in the 2nd to 6th hundred steps and 2-15 per hundred after 800; the
// process's CPU above its threads' was 2.1-2.3 ms per step after 300 steps of warm-up and 0.6 after
// 1000 (one thread: 1.8-2.0 and 1.5, its compiles running on the idle core). Every mode gets the
// same warm-up before it is timed; 1000 steps time DataParallel as a long training run sees it.
const warmup = option("--warmup", 1000);
const TIMEOUT_MS = 900_000;

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

const MODES = ["one", "intra", "dp", "dpLoss"] as const;
type ModeName = (typeof MODES)[number];

/** One mode's figures from its own process. */
interface Measured {
  /** Steps per second: the median over the process's runs. */
  rate: number;
  /** The process's CPU ms per step (every thread: the replicas, V8's helpers, the kernels' pool). */
  cpuMs: number;
  /** Each thread's CPU ms per step: the main thread, then DataParallel's workers. */
  threadCpuMs: number[];
  /** Each thread's run delay, ms per step: runnable but off its core (the same threads). */
  runDelayMs: number[];
  /** DataParallel's threads' wake-up latency after the other's signal, ms per step (main, then workers). */
  wakeMs: number[];
  /** DataParallel's threads' CPU ms per step spent polling for the other before blocking (part of threadCpuMs). */
  spinMs: number[];
  /** DataParallel's threads' young-generation collections per step asked for by the allocator. */
  scavenges: number[];
  /** DataParallel's phase wall times per step (ms): the main thread's, then each worker's. */
  phases: Record<string, number>[];
  /** The pieces DataParallel cut the batch into at the end (its balancer moves samples to the faster thread). */
  pieces: number[];
}

/** One chunk of timed steps, as a child answers it. */
interface Chunk {
  /** Steps per second over the chunk. */
  rate: number;
  /** The main thread's CPU and run delay (off its core), ms per step. */
  cpuMs: number;
  offCoreMs: number;
  /** The main thread's garbage-collection pauses in the chunk, ms per step, and the full collections among them. */
  gcMs: number;
  fullGcs: number;
}

/**
 * A child: one mode of one case, warmed up and then stepped in chunks on the parent's requests
 * (dp_chunks.ts): "warm N" runs N steps and starts the counts; "run N" runs one step that is not
 * timed (the process sat idle while the others ran: its worker thread had gone back to its event
 * loop) and then times N; "result" gives the counts over the timed steps.
 */
async function serve(c: Case, mode: ModeName): Promise<void> {
  rt.manualSeed(0);
  const { model, x, y, lossFn, criterion } = c.make();
  const tuning = { balance: !args.includes("--no-balance"), spinMs: option("--spin-ms", 2) };
  const dp =
    mode === "dp" ? new nn.DataParallel(model, { threads, profile: true, ...tuning })
    : mode === "dpLoss" ? new nn.DataParallel(model, { threads, profile: true, criterion, classes: [new URL("./workers/dp_loss.ts", import.meta.url).href], ...tuning })
    : null;
  rt.setNumThreads(mode === "intra" ? threads : 1);
  const loss =
    mode === "dp" ? () => lossFn(dp!.call(x), y)
    : mode === "dpLoss" ? () => dp!.forwardLoss(x, y)
    : () => lossFn(model.call(x) as Tensor, y);
  const opt = new optim.SGD(model.parameters(), { lr: 1e-3 });
  const stepsOf = (n: number) => {
    for (let i = 0; i < n; i++) {
      opt.zeroGrad();
      loss().backward();
      opt.step();
    }
  };
  // The main thread's collections, by their start on performance.now()'s clock (delivered between requests).
  const pauses: { start: number; ms: number; full: boolean }[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, ms: e.duration, full: ((e as { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR });
  }).observe({ entryTypes: ["gc"] });
  let timed = 0, processUs = 0, mainNs = 0, delayNs = 0;
  /** DataParallel's profile figures summed over the timed steps (per-call figures times calls). */
  let profiled: unknown = null;
  const chunks: { t0: number; t1: number; n: number; chunk: Chunk }[] = [];
  await serveChunks({
    warm: (n) => {
      stepsOf(n);
      dp?.resetProfile();
      return null;
    },
    run: (n) => {
      stepsOf(1);
      const p0 = dp?.profile();
      const cpu0 = process.cpuUsage();
      const main0 = threadCpuNs();
      const delay0 = lastThreadRunDelayNs();
      const t0 = performance.now();
      stepsOf(n);
      const t1 = performance.now();
      const main = threadCpuNs() - main0;
      const delay = lastThreadRunDelayNs() - delay0;
      const used = process.cpuUsage(cpu0);
      // The profile over the timed steps only: the step before them took this process's idle time between chunks.
      if (dp) profiled = addScaled(addScaled(profiled, dp.profile(), 1), p0!, -1);
      timed += n;
      processUs += used.user + used.system;
      mainNs += main;
      delayNs += delay;
      chunks.push({ t0, t1, n, chunk: { rate: (n * 1000) / (t1 - t0), cpuMs: main / 1e6 / n, offCoreMs: delay / 1e6 / n, gcMs: 0, fullGcs: 0 } });
      return null;
    },
    chunks: async () => {
      // The collections' entries come in on the event loop: give it a turn before reading them.
      await new Promise((resolve) => setImmediate(resolve));
      for (const k of chunks) {
        const inside = pauses.filter((e) => e.start >= k.t0 && e.start < k.t1);
        k.chunk.gcMs = inside.reduce((sum, e) => sum + e.ms, 0) / k.n;
        k.chunk.fullGcs = inside.filter((e) => e.full).length;
      }
      return chunks.map((k) => k.chunk);
    },
    result: async () => {
      const p = dp ? (addScaled(null, profiled, 1 / timed) as rt.nn.DataParallelProfile) : undefined;
      await dp?.close();
      const measured: Measured = {
        rate: median(chunks.map((k) => k.chunk.rate)),
        cpuMs: processUs / 1000 / timed,
        threadCpuMs: [mainNs / 1e6 / timed, ...(p?.workers.map((w) => w.cpuMs) ?? [])],
        runDelayMs: [delayNs / 1e6 / timed, ...(p?.workers.map((w) => w.runDelayMs) ?? [])],
        wakeMs: p ? [p.main.wakeMs, ...p.workers.map((w) => w.wakeMs)] : [],
        spinMs: p ? [p.main.spinMs, ...p.workers.map((w) => w.spinMs)] : [],
        scavenges: p ? [p.main.scavenges, ...p.workers.map((w) => w.scavenges)] : [],
        phases: p ? [p.main.wallMs, ...p.workers.map((w) => w.wallMs)] : [],
        pieces: dp?.pieceSizes(x.shape[0]!) ?? [],
      };
      return measured;
    },
  });
}

/**
 * `sum` plus `k` times `p`'s per-call figures multiplied by its calls, field by field (p's shape; a
 * null sum counts as zeros). With k = 1 / calls on a sum, per-call figures again.
 */
function addScaled(sum: unknown, p: unknown, k: number, calls = (p as { calls?: number }).calls ?? 1): unknown {
  if (typeof p === "number") return ((sum as number | null) ?? 0) + k * p * calls;
  if (Array.isArray(p)) return p.map((v, i) => addScaled((sum as unknown[] | null)?.[i] ?? null, v, k, calls));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(p as Record<string, unknown>)) out[key] = key === "calls" ? 1 : addScaled((sum as Record<string, unknown> | null)?.[key] ?? null, v, k, calls);
  return out;
}

/** A round of ringtorch's modes: each in a fresh process of its own, warmed up one after another, then timed in alternated chunks. */
async function oursRound(c: Case, order: readonly ModeName[]): Promise<{ measured: Record<ModeName, Measured>; chunks: Record<ModeName, Chunk[]> }> {
  const passed = args.filter((a, i) => !["--only", "--mode", "--no-peer"].includes(a) && !["--only", "--mode"].includes(args[i - 1]!));
  // The parent's own node options (--import tsx, and any V8 flag given to it) go to every child.
  const kids = Object.fromEntries(order.map((m) => [m, new ChunkedChild(`${c.name} ${m}`, process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...passed, "--only", c.name, "--mode", m], TIMEOUT_MS)])) as Record<ModeName, ChunkedChild>;
  try {
    for (const m of order) await kids[m].ask(`warm ${warmup}`);
    for (let k = 0; k < runs; k++) for (const m of order) await kids[m].ask(`run ${steps}`);
    const chunks = {} as Record<ModeName, Chunk[]>;
    const measured = {} as Record<ModeName, Measured>;
    for (const m of order) {
      chunks[m] = JSON.parse(await kids[m].ask("chunks")) as Chunk[];
      measured[m] = JSON.parse(await kids[m].ask("result")) as Measured;
    }
    return { measured, chunks };
  } finally {
    for (const m of order) kids[m].close();
  }
}

/** The median over chunk pairs of a mode's rate over one thread's in the chunk next to it in time. */
function pairedRatio(mine: readonly Chunk[], base: readonly Chunk[]): { median: number; min: number; max: number } {
  const r = mine.map((k, i) => k.rate / base[i]!.rate);
  return { median: median(r), min: Math.min(...r), max: Math.max(...r) };
}

/** PyTorch's steps/s for one case at `n` intra-op threads, from a fresh process. */
function theirs(peer: Peer, c: Case, n: number): number {
  const out = peerOutput(runPeer(peer, [peerScript("dataparallel.py"), String(n), String(steps), String(runs), c.name], n), "dataparallel.py");
  return (JSON.parse(out.trim().split("\n").pop()!) as Record<string, number>)[c.name]!;
}

/** The mean of each numeric field over the rounds. */
function meanOf(records: readonly Record<string, number>[]): Record<string, number> {
  return Object.fromEntries(Object.keys(records[0] ?? {}).map((k) => [k, records.reduce((s, r) => s + r[k]!, 0) / records.length]));
}
const mean = (v: readonly number[]) => v.reduce((s, x) => s + x, 0) / v.length;

async function main(): Promise<void> {
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : findPeer();
  console.log(describePeer(peer, threads));
  console.log(`each round: each mode in a fresh process, ${warmup} steps of warm-up one process after another, then ${runs} timings of ${steps} steps each, alternated between the processes (the order rotated each round); PyTorch's processes before or after; ${rounds} rounds`);
  const rateRows: (string | number)[][] = [];
  const cpuRows: (string | number)[][] = [];
  const profiles: string[] = [];
  for (const c of cases.filter((k) => only === null || k.name === only)) {
    const got: Record<ModeName, Measured[]> = { one: [], intra: [], dp: [], dpLoss: [] };
    const torch: { one: number[]; intra: number[] } = { one: [], intra: [] };
    for (let r = 0; r < rounds; r++) {
      const order = MODES.map((_, k) => MODES[(k + r) % MODES.length]!);
      const torchRound = () => {
        if (typeof peer === "string") return;
        torch.one.push(theirs(peer, c, 1));
        torch.intra.push(theirs(peer, c, threads));
      };
      // PyTorch's two processes before ringtorch's block in odd rounds, after it in even ones.
      if (r % 2 === 1) torchRound();
      const { measured, chunks } = await oursRound(c, order);
      if (r % 2 === 0) torchRound();
      for (const m of MODES) got[m].push(measured[m]);
      // Each round's wall ratios: chunk by chunk against the one-thread chunk beside it in time.
      const paired = (m: ModeName) => {
        const q = pairedRatio(chunks[m], chunks.one);
        return `${q.median.toFixed(2)}x (${q.min.toFixed(2)}-${q.max.toFixed(2)})`;
      };
      const dpCpu = got.dp[r]!.threadCpuMs.map((v, i) => (v - got.dp[r]!.spinMs[i]!).toFixed(2)).join(" / ");
      const gc = (m: ModeName) => `${mean(chunks[m].map((k) => k.gcMs)).toFixed(2)} ms, ${chunks[m].reduce((s2, k) => s2 + k.fullGcs, 0)} full`;
      const offCore = (m: ModeName) => mean(chunks[m].map((k) => k.offCoreMs)).toFixed(2);
      console.log(`  ${c.name} round ${r + 1}: steps/s one ${got.one[r]!.rate.toFixed(1)}; paired with one thread's chunks, median (min-max): intra ${paired("intra")}, DP ${paired("dp")}, DP loss in replicas ${paired("dpLoss")}${torch.one.length ? `; torch 1 thread ${torch.one[r]!.toFixed(1)}, intra ${(torch.intra[r]! / torch.one[r]!).toFixed(2)}x` : ""}`);
      console.log(`    thread CPU ms per step: one ${got.one[r]!.threadCpuMs[0]!.toFixed(2)}, DP ${dpCpu} (less polling), DP loss ${got.dpLoss[r]!.threadCpuMs.map((v, i) => (v - got.dpLoss[r]!.spinMs[i]!).toFixed(2)).join(" / ")}; main thread's GC pauses per step: one ${gc("one")}, DP ${gc("dp")}, DP loss ${gc("dpLoss")}; main off its core per step: one ${offCore("one")}, DP ${offCore("dp")}, DP loss ${offCore("dpLoss")}`);
    }
    const rate = (m: ModeName) => median(got[m].map((g) => g.rate));
    const cpu = (m: ModeName) => mean(got[m].map((g) => g.cpuMs));
    const perThread = (m: ModeName, key: "threadCpuMs" | "runDelayMs" | "wakeMs" | "spinMs" | "scavenges") => got[m][0]![key].map((_, i) => mean(got[m].map((g) => g[key][i]!)));
    // A DataParallel thread's CPU less its polling (spin.ts), which a busier machine would not have given it: its work.
    const threadCpu = (m: ModeName) => (m === "dp" || m === "dpLoss" ? perThread(m, "threadCpuMs").map((v, i) => v - perThread(m, "spinMs")[i]!) : perThread(m, "threadCpuMs"));
    const spun = (m: ModeName) => perThread(m, "spinMs").reduce((s, v) => s + v, 0);
    const pOne = torch.one.length ? median(torch.one) : NaN;
    const pIntra = torch.intra.length ? median(torch.intra) : NaN;
    const best = Math.max(rate("dp"), rate("dpLoss"));
    rateRows.push([c.name, rate("one"), rate("intra"), rate("intra") / rate("one"), rate("dp"), rate("dp") / rate("one"), rate("dpLoss"), rate("dpLoss") / rate("one"), pOne, pIntra, pIntra / pOne, best / Math.max(pOne, pIntra)]);
    const one = threadCpu("one")[0]!;
    const dpThreads = threadCpu("dp");
    const dpLossThreads = threadCpu("dpLoss");
    cpuRows.push([c.name, cpu("one"), cpu("intra"), cpu("intra") / cpu("one"), cpu("dp"), cpu("dp") / cpu("one"), cpu("dpLoss"), cpu("dpLoss") / cpu("one"), one,
      dpThreads.map((v) => v.toFixed(2)).join(", "), one / Math.max(...dpThreads), one / Math.max(...dpThreads, (cpu("dp") - spun("dp")) / threads),
      dpLossThreads.map((v) => v.toFixed(2)).join(", "), one / Math.max(...dpLossThreads), one / Math.max(...dpLossThreads, (cpu("dpLoss") - spun("dpLoss")) / threads)]);
    for (const [m, label] of [["dp", "loss on the gathered output"], ["dpLoss", "loss in the replicas (forwardLoss)"]] as const) {
      const phases = got[m][0]!.phases.map((_, i) => meanOf(got[m].map((g) => g.phases[i]!)));
      const text = (w: Record<string, number>) => Object.entries(w).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
      const cpus = threadCpu(m);
      const delays = perThread(m, "runDelayMs");
      const wakes = perThread(m, "wakeMs");
      const spins = perThread(m, "spinMs");
      profiles.push([
        `${c.name}, ${label}: DataParallel, ms per step (mean over the rounds; off-core: runnable, waiting for a core; wake: from the other thread's signal to running); pieces at the end, per round: ${got[m].map((g) => g.pieces.join("/")).join(", ")}`,
        ...phases.map((w, i) => `  ${(i === 0 ? "main thread" : `worker ${i}`).padEnd(12)}  cpu ${cpus[i]!.toFixed(2)} (+ spin ${spins[i]!.toFixed(2)}), off-core ${delays[i]!.toFixed(2)}, wake ${wakes[i]!.toFixed(2)}, the allocator's scavenges ${perThread(m, "scavenges")[i]!.toFixed(2)} | wall: ${text(w)}`),
      ].join("\n"));
    }
  }

  console.log(`\ntraining steps/s, ${threads} threads, median over the rounds (ratios over one thread of the same side; last column: ringtorch DataParallel over PyTorch's best)`);
  printTable(["model", "rt 1 thread", `rt intra-op ${threads}`, "ratio", `rt DataParallel ${threads}`, "ratio", "rt DP, loss in replicas", "ratio", "torch 1 thread", `torch intra-op ${threads}`, "ratio", "rt DP best / torch best"], rateRows);
  // CPU per step says what each mode costs whatever else the machine runs: DataParallel's ideal is
  // one thread's CPU (the same work, cut in pieces), with its wall time divided by the threads. The
  // "1 thread / busiest" columns bound DataParallel's speed-up from CPU alone: one thread's CPU over
  // the busiest DataParallel thread's, what the wall-time ratio would be on cores nothing else uses
  // and with no thread ever waiting for another (a wall ratio well below it on a quiet machine is
  // time spent waiting or V8's helper threads; on a loaded one, time other processes took). V8's
  // own threads (the concurrent compiler, GC helpers: the process's CPU less the threads') run on
  // the idle core beside one thread but take the replicas' cores under DataParallel, so "with V8's
  // threads" bounds it also by the process's CPU spread over the `threads` cores.
  console.log("\nCPU ms per training step, mean over the rounds (ratios: over one thread; DataParallel's thread columns and bounds without its polling before blocking, the process columns with it)");
  printTable(["model", "rt 1 thread", `rt intra-op ${threads}`, "ratio", `rt DP ${threads}`, "ratio", "DP, loss in replicas", "ratio", "thread CPU: 1 thread", "DP (main, workers)", "1 thread / busiest", "with V8's threads", "DP loss in replicas", "1 thread / busiest", "with V8's threads"], cpuRows);
  console.log(`\n${profiles.join("\n")}`);
}

const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
if (only !== null && !cases.some((c) => c.name === only)) throw new RangeError(`--only: expected one of ${cases.map((c) => c.name).join(", ")}, got ${only}`);
const modeArg = args.includes("--mode") ? args[args.indexOf("--mode") + 1] : null;
if (modeArg !== null) {
  // A child: one mode of one case.
  if (!(MODES as readonly string[]).includes(modeArg) || only === null) throw new RangeError(`--mode: expected one of ${MODES.join(", ")} with --only, got ${modeArg}`);
  await serve(cases.find((c) => c.name === only)!, modeArg as ModeName);
} else {
  await main();
}
