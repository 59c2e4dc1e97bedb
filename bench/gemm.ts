// node --import tsx --conditions=source bench/gemm.ts [--threads 1,2] [--sizes 256,512,1024,2048] [--rounds 3] [--no-mlp] [--no-peer] [--clock wall|cpu] [--shapes g@w,fc1]
//
// --shapes keeps only the MLP/attention rows whose name contains one of the comma-separated words
// (--sizes "" leaves out the squares), for measuring one product without the whole table.
// --clock cpu divides the work by the process's CPU time instead of the wall clock, on both sides:
// on a machine that other jobs load, the wall clock measures the share of the cores each side got,
// while CPU time (at 1 thread) still measures the code. At 2 threads it counts the time both
// threads ran, spinning included, so it is an efficiency, not a speed.
//
// Debian's python3-torch calls whatever libblas.so.3 the system's alternative names, which may be
// netlib's reference BLAS (a few GFLOPS); the bench prints the library the peer loaded. To run it
// on OpenBLAS without touching the system: `apt-get download libopenblas0-pthread && dpkg -x
// libopenblas0-pthread_*.deb ob`, then LD_LIBRARY_PATH=$PWD/ob/usr/lib/x86_64-linux-gnu/openblas-pthread
// PEER_PYTHON=/usr/bin/python3 before the command above.
//
// float32 GEMM of the cpu backend against the strongest PyTorch here (bench/peer.ts) measured in this
// one run. Square sizes follow bench/torch/mm.py exactly (3 warm-up calls, then 7 runs of enough
// calls to last 0.3 s at 50 GFLOPS; median GFLOPS), and mm.py itself is the peer. A second table has
// the MLP benchmark's shapes (batch 64): x @ w.T forward, g @ w and g.T @ x backward, and the
// attention-shaped batched products (32 heads of 128 tokens: q @ k.T and p @ v), timed the same way
// on both sides (torch.bmm for a batch). The square table also has `a.matmul(b)` through the public API, allocating its
// output every call as a user's loop does (bench/api.ts has it beside PyTorch's eager `a @ b`). The two sides take turns for `rounds` rounds and each figure is the median
// over rounds, so that load from other processes drifting during the run hits both alike. The
// machine is shared and noisy: compare ratios from one run only.
import { createCpuBackend, type CpuBackend } from "../src/backend/cpu/index.js";
import { getBackend, randn } from "../src/index.js";
import { secondsPerCall } from "./api.js";
import { loadAddon, nativeUnavailableReason } from "../src/backend/index.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer, type Peer } from "./peer.js";
import { clockFromArgs, secondsOn } from "./clock.js";
import { median, printTable } from "./table.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const THREADS = option("--threads", "1,2").split(",").map(Number);
const SIZES = option("--sizes", "256,512,1024,2048").split(",").filter((n) => n !== "").map(Number);
const ROUNDS = Number(option("--rounds", "3"));
const PEER = peerScript("mm.py");
const CPU_CLOCK = clockFromArgs(args) === "cpu";
/** Seconds on the chosen clock: the wall, or this process's user + system CPU time. */
const clock = secondsOn(CPU_CLOCK ? "cpu" : "wall");

interface Shape {
  name: string;
  batch?: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
}

const ALL_MLP_SHAPES: Shape[] = [
  { name: "fc1 x@w.T 64x1024x784", m: 64, n: 1024, k: 784, transA: false, transB: true },
  { name: "fc2 x@w.T 64x1024x1024", m: 64, n: 1024, k: 1024, transA: false, transB: true },
  { name: "fc1 dX g@w 64x784x1024", m: 64, n: 784, k: 1024, transA: false, transB: false },
  { name: "fc2 dX g@w 64x1024x1024", m: 64, n: 1024, k: 1024, transA: false, transB: false },
  { name: "fc1 dW g.T@x 1024x784x64", m: 1024, n: 784, k: 64, transA: true, transB: false },
  { name: "fc2 dW g.T@x 1024x1024x64", m: 1024, n: 1024, k: 64, transA: true, transB: false },
  { name: "attn q@k.T 32x[128x128x64]", batch: 32, m: 128, n: 128, k: 64, transA: false, transB: true },
  { name: "attn p@v 32x[128x64x128]", batch: 32, m: 128, n: 64, k: 128, transA: false, transB: false },
  { name: "bmm 32x[128x128x64]", batch: 32, m: 128, n: 128, k: 64, transA: false, transB: false },
  { name: "attn p@v 8x[256x64x256]", batch: 8, m: 256, n: 64, k: 256, transA: false, transB: false },
  { name: "classifier x@w.T 1024x16x256", m: 1024, n: 16, k: 256, transA: false, transB: true },
];

const SHAPE_WORDS = option("--shapes", "").split(",").filter((w) => w !== "");
const MLP_SHAPES = ALL_MLP_SHAPES.filter((s) => SHAPE_WORDS.length === 0 || SHAPE_WORDS.some((w) => s.name.includes(w)));

function randomShared(n: number): Float32Array {
  const a = new Float32Array(new SharedArrayBuffer(4 * n));
  for (let i = 0; i < n; i++) a[i] = Math.random() * 2 - 1;
  return a;
}

/**
 * The public API in a loop that keeps nothing: `a.matmul(b)` allocates its output every call
 * (GFLOPS). api.ts's secondsPerCall reads the same `--clock` from argv, so it times either clock.
 */
function measureApi(n: number): number {
  const a = randn([n, n]);
  const b = randn([n, n]);
  return (2 * n * n * n) / secondsPerCall(() => a.matmul(b)) / 1e9;
}

/** mm.py's protocol: 3 warm-up calls, 7 runs of max(1, 0.3 s at 50 GFLOPS) calls, median GFLOPS. */
function timed(flop: number, call: () => unknown): number {
  for (let i = 0; i < 3; i++) call();
  const reps = Math.max(1, Math.floor(0.3 / (flop / 50e9)));
  const gflops: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = clock();
    for (let i = 0; i < reps; i++) call();
    gflops.push(flop / ((clock() - t0) / reps) / 1e9);
  }
  return median(gflops);
}

/** The kernel through the backend, on preallocated operands (GFLOPS). */
function measure(cpu: CpuBackend, s: Shape): number {
  const batch = s.batch ?? 1;
  const a = randomShared(batch * s.m * s.k);
  const b = randomShared(batch * s.k * s.n);
  const out = new Float32Array(new SharedArrayBuffer(4 * batch * s.m * s.n));
  const call = {
    batch, m: s.m, n: s.n, k: s.k,
    a, aOffset: 0, aRowStride: s.transA ? 1 : s.k, aColStride: s.transA ? s.m : 1, aBatchStride: s.m * s.k,
    b, bOffset: 0, bRowStride: s.transB ? 1 : s.n, bColStride: s.transB ? s.k : 1, bBatchStride: s.k * s.n,
    out, outOffset: 0, alpha: 1, beta: 0,
  };
  return timed(2 * batch * s.m * s.n * s.k, () => cpu.matmul(call));
}

// The MLP and attention shapes for PyTorch, timed like mm.py (transposed operands are views, as
// nn.Linear and q @ k.transpose(-2, -1) make them). Its first line names the BLAS libraries it loaded.
const PEER_SHAPES = `
import torch, time, statistics, sys, json
torch.set_num_threads(int(sys.argv[1]))
torch.mm(torch.randn(64, 64), torch.randn(64, 64))
import re
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if re.search(r"/(libblas|libopenblas|libmkl)[^/]*$", l.strip())})
print("libs=" + (" ".join(libs) or "none: linked into torch (PyTorch 2.x wheels carry MKL inside libtorch_cpu)"))
for b, m, n, k, ta, tb in json.loads(sys.argv[2]):
    a = torch.randn(b, k, m).transpose(1, 2) if ta else torch.randn(b, m, k)
    w = torch.randn(b, n, k).transpose(1, 2) if tb else torch.randn(b, k, n)
    c = torch.empty(b, m, n)
    mm = (lambda: torch.mm(a[0], w[0], out=c[0])) if b == 1 else (lambda: torch.bmm(a, w, out=c))
    flop = 2.0 * b * m * n * k
    for _ in range(3): mm()
    reps = max(1, int(0.3 / (flop / 50e9)))
    clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
    gf = []
    for r in range(7):
        t0 = clock()
        for _ in range(reps): mm()
        gf.append(flop / ((clock() - t0) / reps) / 1e9)
    print("median=%.3f" % statistics.median(gf))
`;

let peerLibs = "";

function runPython(peer: Peer, argv: string[], threads: number): number[] {
  const out = peerOutput(runPeer(peer, argv, threads), argv[0] === "-c" ? "MLP shapes" : argv.join(" "));
  peerLibs ||= /libs=(.*)/.exec(out)?.[1] ?? "";
  return [...out.matchAll(/median=([\d.]+)/g)].map((m) => Number(m[1]));
}

function main(): void {
  const addon = loadAddon();
  if (!addon) throw new Error(`bench/gemm.ts needs the native addon: ${nativeUnavailableReason()}`);
  const cpu = createCpuBackend(addon);
  const peer = args.includes("--no-peer") ? "--no-peer given" : findPeer();
  console.log(`ringtorch cpu backend, ${cpu.isa()} kernels; GFLOPS per ${CPU_CLOCK ? "second of process CPU time (--clock cpu)" : "wall-clock second"}`);
  for (const threads of THREADS) console.log(describePeer(peer, threads));

  const square: (string | number)[][] = [];
  const mlp: (string | number)[][] = [];
  for (const threads of THREADS) {
    cpu.setNumThreads(threads);
    (getBackend() as CpuBackend).setNumThreads?.(threads);
    const rounds: { ours: number[]; api: number[]; ourMlp: number[]; theirs: number[]; theirMlp: number[] }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const ours = SIZES.map((n) => measure(cpu, { name: String(n), m: n, n, k: n, transA: false, transB: false }));
      const api = SIZES.map((n) => measureApi(n));
      const ourMlp = args.includes("--no-mlp") ? [] : MLP_SHAPES.map((s) => measure(cpu, s));
      let theirs = SIZES.map(() => NaN);
      let theirMlp = ourMlp.map(() => NaN);
      if (typeof peer !== "string") {
        const shapes = (list: Shape[]): string => JSON.stringify(list.map((s) => [s.batch ?? 1, s.m, s.n, s.k, s.transA, s.transB]));
        if (CPU_CLOCK) {
          // mm.py times the wall clock only; the same protocol with the CPU clock.
          const squares = SIZES.map((n) => ({ name: String(n), m: n, n, k: n, transA: false, transB: false }));
          theirs = runPython(peer, ["-c", PEER_SHAPES, String(threads), shapes(squares), "cpu"], threads);
        } else {
          const all = runPython(peer, [PEER, String(threads)], threads);
          const peerSizes = [256, 512, 1024, 2048];
          theirs = SIZES.map((n) => (peerSizes.includes(n) ? all[peerSizes.indexOf(n)] : NaN));
        }
        if (ourMlp.length) {
          theirMlp = runPython(peer, ["-c", PEER_SHAPES, String(threads), shapes(MLP_SHAPES), CPU_CLOCK ? "cpu" : "wall"], threads);
        }
      }
      rounds.push({ ours, api, ourMlp, theirs, theirMlp });
    }
    const over = (pick: (r: (typeof rounds)[number]) => number[], i: number): number => median(rounds.map((r) => pick(r)[i]));
    SIZES.forEach((n, i) => {
      const [o, a, t] = [over((r) => r.ours, i), over((r) => r.api, i), over((r) => r.theirs, i)];
      square.push([String(n), String(threads), o, t, o / t, a, a / o, a / t]);
    });
    if (!args.includes("--no-mlp")) {
      MLP_SHAPES.forEach((s, i) => {
        const [o, t] = [over((r) => r.ourMlp, i), over((r) => r.theirMlp, i)];
        mlp.push([s.name, String(threads), o, t, o / t]);
      });
    }
  }
  console.log();
  printTable(["size", "threads", "ringtorch GFLOPS", "PyTorch GFLOPS", "ratio", "a.matmul(b) GFLOPS", "API / kernel", "API / PyTorch"], square);
  console.log("(a.matmul(b): the public API in a loop that keeps nothing, each call allocating its output; PyTorch: torch.mm with out=)");
  if (mlp.length) {
    console.log();
    printTable(["MLP/attention shape (m x n x k)", "threads", "ringtorch GFLOPS", "PyTorch GFLOPS", "ratio"], mlp);
  }
  if (peerLibs) console.log(`(the peer's BLAS, as loaded: ${peerLibs}${/\/blas\/libblas/.test(peerLibs) ? " -- netlib's reference BLAS, see the first lines of this file" : ""})`);
}

main();
