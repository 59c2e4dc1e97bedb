// node --import tsx --conditions=source bench/api.ts [--threads 1] [--sizes 4096,65536,1048576,16777216,67108864] [--ops matmul,add,mul,relu,softmax,layerNorm,sum] [--steps 10000] [--clock wall|cpu] [--no-peer]
//
// The ops a user calls, as a user calls them: `a.matmul(b)`, `x.add(y)`, `x.mul(y)`, `x.relu()`,
// softmax, layer norm and sum in a plain loop that keeps nothing and releases nothing, so every call allocates its output.
// Beside each: the same kernel with a preallocated output (what the other benches time), and the
// strongest PyTorch here (bench/peer.ts) running the eager op (`a @ b`, `x + y`, ...) in the same
// loop. Sizes are the output's bytes (the input's for sum); matmul is square and stops at 2048².
// Each figure is the median of 7 runs of enough calls to last about 50 ms, after a warm-up of at
// least 30 ms and, where that takes under 300 ms, 200 calls (V8 compiles the op's path by then). First, `steps` steps of a
// loop mixing the ops, with the resident memory and the arena's counters every tenth of the way:
// steady-state memory must stay flat. The machine is shared and noisy: compare ratios from one run.
// `--clock cpu` times both sides by their process's CPU time (Node's process.cpuUsage, Python's
// time.process_time; GC and helper threads included) instead of the wall clock: on a machine with
// more runnable processes than cores, time spent waiting for a core then stays out of the figures.
// The bench runs itself again with the node flags ringrun gives a user's script (`--no-node-snapshot`,
// and `--max-semi-space-size=N` where RINGTORCH_SEMI_SPACE_MB=N: src/launch/young_generation.ts)
// unless the node flags or RINGTORCH_NODE_SNAPSHOT=1 chose otherwise.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getBackend, layerNorm, memoryPool, randn, sum, type Tensor } from "../src/index.js";
import type { Backend, TypedArray } from "../src/backend/backend.js";
import { childNodeFlags } from "../src/launch/young_generation.js";
import { describePeer, findPeer, runPeer } from "./peer.js";
import { clockFromArgs, secondsOn } from "./clock.js";
import { median, printTable } from "./table.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const THREADS = Number(option("--threads", "1"));
const SIZES = option("--sizes", "4096,65536,1048576,16777216,67108864").split(",").map(Number);
const OPS = option("--ops", "matmul,add,mul,relu,softmax,layerNorm,sum").split(",") as Op[];
const STEPS = Number(option("--steps", "10000"));
const CLOCK = clockFromArgs(args);
const seconds = secondsOn(CLOCK);
/** Milliseconds on the chosen clock. */
const now = () => seconds() * 1e3;
const COLS = 1024;
type Op = "matmul" | "add" | "mul" | "relu" | "softmax" | "layerNorm" | "sum";

/** The problem an op runs at a size: its inputs' shape, and what one call does (for the rate). */
export function shapeOf(op: Op, bytes: number): { shape: number[]; work: number; unit: string } | null {
  const n = bytes / 4;
  if (op === "matmul") {
    const d = Math.round(Math.sqrt(n));
    return d > 2048 ? null : { shape: [d, d], work: 2 * d * d * d, unit: "GFLOPS" };
  }
  if (op === "add" || op === "mul") return { shape: [n], work: 12 * n, unit: "GB/s" };
  if (op === "relu") return { shape: [n], work: 8 * n, unit: "GB/s" };
  if (op === "sum") return { shape: [n], work: 4 * n, unit: "GB/s" };
  return { shape: [Math.max(1, n / COLS), Math.min(n, COLS)], work: 8 * n, unit: "GB/s" };
}

/** Median seconds per call over 7 runs of enough calls to last about 50 ms, after 30 ms of warm-up. */
export function secondsPerCall(f: () => unknown): number {
  let calls = 0;
  const t0 = now();
  for (let ms = 0; calls < 3 || ms < 30 || (calls < 200 && ms < 300); ms = now() - t0) {
    f();
    calls++;
  }
  // Timed again after the warm-up: the first calls (loading, compiling) would make `once` too long.
  // At least 5 ms of calls: process CPU time may advance in steps of a few µs.
  const t1 = now();
  let timed = 0;
  do {
    f();
    timed++;
  } while (timed < 3 || now() - t1 < 5);
  const once = Math.max(1e-7, (now() - t1) / 1e3 / timed);
  const reps = Math.max(1, Math.round(0.05 / once));
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const start = now();
    for (let i = 0; i < reps; i++) f();
    runs.push((now() - start) / 1e3 / reps);
  }
  return median(runs);
}

/**
 * The call, and a function that drops its inputs: V8's call feedback may keep the last closure a
 * loop called alive, and with it the inputs it captured (up to 256 MB each), into the next cases.
 */
function publicCall(op: Op, shape: number[]): [() => unknown, () => void] {
  let io: { x: Tensor; y: Tensor; w: Tensor; b: Tensor } | null = { x: randn(shape), y: randn(shape), w: randn([shape[1] ?? 1]), b: randn([shape[1] ?? 1]) };
  const drop = () => void (io = null);
  switch (op) {
    case "matmul": return [() => io!.x.matmul(io!.y), drop];
    case "add": return [() => io!.x.add(io!.y), drop];
    case "mul": return [() => io!.x.mul(io!.y), drop];
    case "relu": return [() => io!.x.relu(), drop];
    case "softmax": return [() => io!.x.softmax(-1), drop];
    case "layerNorm": return [() => layerNorm(io!.x, [shape[1]], io!.w, io!.b), drop];
    case "sum": return [() => sum(io!.x), drop];
  }
}

function kernelCall(be: Backend, op: Op, shape: number[]): [() => unknown, () => void] {
  const data = (t: Tensor) => t.storage.data;
  const n = shape.reduce((p, q) => p * q, 1);
  const [rows, cols] = [shape[0], shape[1] ?? 1];
  let io: { x: TypedArray; y: TypedArray; out: TypedArray } | null = { x: data(randn(shape)), y: data(randn(shape)), out: new Float32Array(new SharedArrayBuffer(4 * n)) };
  const drop = () => void (io = null);
  switch (op) {
    case "matmul": {
      const call = () => ({ batch: 1, m: rows, n: cols, k: cols, a: io!.x, aOffset: 0, aRowStride: cols, aColStride: 1, aBatchStride: 0, b: io!.y, bOffset: 0, bRowStride: cols, bColStride: 1, bBatchStride: 0, out: io!.out, outOffset: 0, alpha: 1, beta: 0 });
      return [() => be.matmul(call()), drop];
    }
    case "add":
    case "mul":
      return [() => be.binary(op, { data: io!.x, offset: 0, strides: [1] }, { data: io!.y, offset: 0, strides: [1] }, [n], io!.out), drop];
    case "relu": return [() => be.unary("relu", io!.x, 0, io!.out, n), drop];
    case "softmax": return [() => be.softmax(io!.x, 0, rows, cols, false, io!.out), drop];
    case "layerNorm": {
      const [w, b, mean, rstd] = [data(randn([cols])), data(randn([cols])), new Float32Array(rows), new Float32Array(rows)];
      return [() => be.layerNorm(io!.x, rows, cols, w, b, 1e-5, io!.out, mean, rstd), drop];
    }
    case "sum": {
      const s = new Float32Array(1);
      return [() => be.reduce("sum", io!.x, 0, 1, n, 1, s, null), drop];
    }
  }
}

const PEER = `
import torch, time, statistics, sys, json
import torch.nn.functional as F
torch.set_num_threads(int(sys.argv[1]))
clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
def spc(f):
    calls = 0; t0 = clock()
    while calls < 3 or clock() - t0 < 0.03 or (calls < 200 and clock() - t0 < 0.3): f(); calls += 1
    t1 = clock(); timed = 0
    while timed < 3 or clock() - t1 < 0.005: f(); timed += 1
    once = max(1e-7, (clock() - t1) / timed)
    reps = max(1, round(0.05 / once)); runs = []
    for r in range(7):
        t0 = clock()
        for _ in range(reps): f()
        runs.append((clock() - t0) / reps)
    return statistics.median(runs)
with torch.inference_mode():
    for op, shape in json.loads(sys.argv[2]):
        x = torch.randn(*shape); y = torch.randn(*shape); w = torch.randn(shape[-1]); b = torch.randn(shape[-1])
        f = {"matmul": lambda: x @ y, "add": lambda: x + y, "mul": lambda: x * y, "relu": lambda: torch.relu(x), "softmax": lambda: torch.softmax(x, -1),
             "layerNorm": lambda: F.layer_norm(x, (shape[-1],), w, b), "sum": lambda: x.sum()}[op]
        print("%s %s %.9f" % (op, "x".join(map(str, shape)), spc(f)), flush=True)
`;

function peerTimes(cases: [Op, number[]][]): Map<string, number> | string {
  if (args.includes("--no-peer")) return "--no-peer given";
  const peer = findPeer();
  console.log(describePeer(peer, THREADS));
  if (typeof peer === "string") return peer;
  const r = runPeer(peer, ["-c", PEER, String(THREADS), JSON.stringify(cases), CLOCK], THREADS);
  if (r.status !== 0) return `the peer failed: ${r.stderr.trim().split("\n").pop()}`;
  const out = new Map<string, number>();
  for (const line of r.stdout.trim().split("\n")) {
    const [op, shape, s] = line.split(" ");
    out.set(`${op} ${shape}`, Number(s));
  }
  return out;
}

function steadyState(steps: number): void {
  const a = randn([256, 256]);
  const x = randn([COLS * 64]);
  const rows: (string | number)[][] = [];
  const t0 = performance.now();
  for (let i = 1; i <= steps; i++) {
    const h = a.matmul(a).softmax(-1);
    x.add(x).mul(x).sum();
    layerNorm(h, [256]);
    if (i % Math.max(1, Math.floor(steps / 10)) === 0) {
      const s = memoryPool.stats();
      rows.push([String(i), process.memoryUsage().rss / 2 ** 20, s ? s.held / 2 ** 20 : NaN, s ? s.free / 2 ** 20 : NaN, s ? s.fresh / 2 ** 20 : NaN, s ? s.collections : NaN, s ? s.fullCollections : NaN]);
    }
  }
  console.log(`steady state: ${steps} steps of matmul 256² → softmax → layer norm, and add → mul → sum over 64 Ki floats, keeping nothing (${((performance.now() - t0) / steps).toFixed(3)} ms/step)`);
  printTable(["step", "RSS MB", "arena held MB", "arena free MB", "ever fresh MB", "scavenges asked", "full collections asked"], rows);
  console.log();
}

function main(): void {
  const be = getBackend() as Backend & { setNumThreads?: (n: number) => void; isa?: () => string };
  be.setNumThreads?.(THREADS);
  const cases: [Op, number[]][] = [];
  for (const op of OPS) for (const bytes of SIZES) {
    const s = shapeOf(op, bytes);
    if (s) cases.push([op, s.shape]);
  }
  console.log(`ringtorch ${be.name} backend${be.isa ? `, ${be.isa()} kernels` : ""}, ${THREADS} thread(s); tensor memory: ${memoryPool.stats() ? "native arena" : "plain SharedArrayBuffers"}; timed by ${CLOCK === "cpu" ? "process CPU time" : "the wall clock"}`);
  // The steady state first: V8 may keep a measured case's inputs alive (a stale slot, a call site's
  // feedback) until later collections, and they would count in the table's held memory.
  if (STEPS > 0) steadyState(STEPS);
  const rows: (string | number)[][] = [];
  const ours = cases.map(([op, shape]) => {
    const [call, drop] = publicCall(op, shape);
    const pub = secondsPerCall(call);
    drop();
    const [kernel, dropKernel] = kernelCall(be, op, shape);
    const ker = secondsPerCall(kernel);
    dropKernel();
    return { pub, ker };
  });
  const policy = memoryPool.policy();
  if (policy) {
    const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ? [`NODE_OPTIONS=${process.env.NODE_OPTIONS}`] : [])].join(" ");
    console.log(`arena: forced scavenges ${policy.scavengeMicros.toFixed(0)} µs (average), budget ${(policy.budget / 2 ** 20).toFixed(2)} MB (RINGTORCH_ARENA_BUDGET_MB), or 3 outputs where larger; node flags: ${flags}`);
  }
  const theirs = peerTimes(cases);
  cases.forEach(([op, shape], i) => {
    const s = shapeOf(op, shape.reduce((p, q) => p * q, 4))!;
    const t = typeof theirs === "string" ? NaN : (theirs.get(`${op} ${shape.join("x")}`) ?? NaN);
    const { pub, ker } = ours[i];
    rows.push([op, shape.join("×"), pub * 1e6, ker * 1e6, t * 1e6, s.work / pub / 1e9, s.unit, pub / ker - 1, t / pub]);
  });
  console.log();
  printTable(["op", "shape", "API µs", "kernel µs", "PyTorch µs", "API rate", "unit", "API over kernel", "vs PyTorch"], rows);
  if (typeof theirs === "string") console.log(`PyTorch not measured: ${theirs}`);
  console.log("targets: API over kernel ≤ 0.10 for outputs ≥ 64 KB; vs PyTorch ≥ 1.0 (PyTorch's time / ours) from 4 KB to 64 MB");
}

/** This script again, in a child with ringrun's node flags: its exit status, or null where the flags already chose. */
function withChildFlags(): number | null {
  const flags = childNodeFlags(process.execArgv, process.env);
  if (flags.length === 0) return null;
  const r = spawnSync(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), ...args], { stdio: "inherit" });
  return r.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const status = withChildFlags();
  if (status === null) main();
  else process.exitCode = status;
}
