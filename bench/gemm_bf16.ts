// node --import tsx --conditions=source bench/gemm_bf16.ts [--threads 1,2] [--no-peer] [--threshold]
//
// The bfloat16 GEMM kernel (backend.matmulBf16, float32 sums) in GFLOPS beside the float32 kernel
// and PyTorch's bfloat16 torch.matmul (bench/torch/mm_bf16.py), on square sizes, the GPT bench's
// linear shapes (x @ w.T forward, g @ w and g.T @ x backward, 1024 tokens) and attention's batched
// products (32 heads x 128 x 128 x 64). Operands are float32 (rounded while packed, as autocast runs
// them) on each path this CPU can run (amx: AMX tiles, avx512bf16: vdpbf16ps, portable: rounded
// float32 copies and the float32 GEMM) and, for the default path, also bfloat16. Timing as
// bench/api.ts; the machine is shared: compare ratios from one run only.
// --threshold: the default path at 1 and 2 threads, alternated, on a ladder of sizes around the
// pool's threshold (bf16_gemm.cc's parallel_macs: below it the product stays on one thread, so
// build with it at 0 to see both sides), to set where a second thread starts to pay.
import { createCpuBackend, type CpuBackend } from "../src/backend/cpu/index.js";
import type { MatmulArgs } from "../src/backend/backend.js";
import { loadAddon, nativeUnavailableReason } from "../src/backend/index.js";
import { floatToBf16 } from "../src/backend/reference/convert.js";
import { secondsPerCall } from "./api.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer } from "./peer.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const THREADS = (args.includes("--threads") ? args[args.indexOf("--threads") + 1] : "1,2").split(",").map(Number);

type Shape = [name: string, batch: number, m: number, n: number, k: number, transA: boolean, transB: boolean];
const SHAPES: Shape[] = [
  ...[256, 512, 1024, 2048].map((s): Shape => [`${s}²`, 1, s, s, s, false, false]),
  ["qkv x@w.T 1024x768x256", 1, 1024, 768, 256, false, true],
  ["ffn1 x@w.T 1024x1024x256", 1, 1024, 1024, 256, false, true],
  ["ffn2 x@w.T 1024x256x1024", 1, 1024, 256, 1024, false, true],
  ["head x@w.T 1024x8192x256", 1, 1024, 8192, 256, false, true],
  ["ffn2 dX g@w 1024x1024x256", 1, 1024, 1024, 256, false, false],
  ["ffn1 dW g.T@x 1024x256x1024", 1, 1024, 256, 1024, true, false],
  ["attn q@k.T 32x128x128x64", 32, 128, 128, 64, false, true],
  ["attn p@v 32x128x64x128", 32, 128, 64, 128, false, false],
];

function operands(s: Shape): { f32: [Float32Array, Float32Array]; bf16: [Uint16Array, Uint16Array] } {
  const [, batch, m, n, k] = s;
  const rand = (len: number) => Float32Array.from({ length: len }, () => Math.random() * 2 - 1);
  const a = rand(batch * m * k), b = rand(batch * k * n);
  return { f32: [a, b], bf16: [Uint16Array.from(a, floatToBf16), Uint16Array.from(b, floatToBf16)] };
}

function gflops(s: Shape, run: (args: MatmulArgs) => void, a: MatmulArgs["a"], b: MatmulArgs["b"]): number {
  const [, batch, m, n, k, ta, tb] = s;
  const call: MatmulArgs = {
    batch, m, n, k,
    a, aOffset: 0, aRowStride: ta ? 1 : k, aColStride: ta ? m : 1, aBatchStride: m * k,
    b, bOffset: 0, bRowStride: tb ? 1 : n, bColStride: tb ? k : 1, bBatchStride: k * n,
    out: new Float32Array(batch * m * n), outOffset: 0, alpha: 1, beta: 0,
  };
  return (2 * batch * m * n * k) / secondsPerCall(() => run(call)) / 1e9;
}

// Wall seconds per call at `threads`, the median of 7 runs of ~10 ms.
function wallPerCall(cpu: CpuBackend, threads: number, call: () => void): number {
  cpu.setNumThreads(threads);
  let reps = 1;
  for (let t0 = performance.now(); performance.now() - t0 < 10; reps++) call();
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) call();
    runs.push((performance.now() - t0) / 1e3 / reps);
  }
  return runs.sort((x, y) => x - y)[3];
}

function threshold(cpu: CpuBackend): void {
  const ladder: Shape[] = [
    ["64x128x256", 1, 64, 128, 256, false, true],
    ["128x128x256", 1, 128, 128, 256, false, true],
    ["128x256x256", 1, 128, 256, 256, false, true],
    ["256x256x256", 1, 256, 256, 256, false, true],
    ["256x512x256", 1, 256, 512, 256, false, true],
    ["512x512x256", 1, 512, 512, 256, false, true],
    ["attn 4x128x128x64", 4, 128, 128, 64, false, true],
    ["attn 8x128x128x64", 8, 128, 128, 64, false, true],
    ["attn 16x128x128x64", 16, 128, 128, 64, false, true],
    ["attn 32x128x128x64", 32, 128, 128, 64, false, true],
    ["attn 8x128x64x128", 8, 128, 64, 128, false, false],
  ];
  const rows: (string | number)[][] = [];
  for (const s of ladder) {
    const [, batch, m, n, k, ta, tb] = s;
    const [a, b] = operands(s).f32;
    const call: MatmulArgs = {
      batch, m, n, k,
      a, aOffset: 0, aRowStride: ta ? 1 : k, aColStride: ta ? m : 1, aBatchStride: m * k,
      b, bOffset: 0, bRowStride: tb ? 1 : n, bColStride: tb ? k : 1, bBatchStride: k * n,
      out: new Float32Array(batch * m * n), outOffset: 0, alpha: 1, beta: 0,
    };
    const one: number[] = [], two: number[] = [], speedup: number[] = [];
    for (let round = 0; round < 5; round++) {
      const t1 = wallPerCall(cpu, 1, () => cpu.matmulBf16(call)), t2 = wallPerCall(cpu, 2, () => cpu.matmulBf16(call));
      one.push(t1 * 1e6), two.push(t2 * 1e6), speedup.push(t1 / t2);
    }
    const mid = (v: number[]) => v.sort((x, y) => x - y)[2];
    rows.push([s[0], (batch * m * n * k) / 2 ** 20, mid(one), mid(two), mid(speedup)]);
  }
  printTable(["shape", "Mi MACs", "1 thread µs", "2 threads µs", "speedup (median of pairs)"], rows);
}

function main(): void {
  const addon = loadAddon();
  if (!addon) throw new Error(`bench/gemm_bf16.ts needs the native addon: ${nativeUnavailableReason()}`);
  const cpu: CpuBackend = createCpuBackend(addon);
  const peer = args.includes("--no-peer") ? "--no-peer given" : findPeer();
  const best = cpu.bf16GemmPath();
  const paths = ["amx", "avx512bf16", "portable"].filter((p) => cpu.setBf16GemmPath(p));
  cpu.setBf16GemmPath("auto");
  console.log(`ringtorch cpu backend: ${cpu.isa()} float32 kernels, bfloat16 GEMM paths ${paths.join(", ")} (default ${best})`);
  if (args.includes("--threshold")) return threshold(cpu);
  const onPath = <T>(path: string, fn: () => T): T => {
    cpu.setBf16GemmPath(path);
    try {
      return fn();
    } finally {
      cpu.setBf16GemmPath("auto");
    }
  };
  const rows: (string | number)[][] = [];
  for (const threads of THREADS) {
    console.log(describePeer(peer, threads));
    cpu.setNumThreads(threads);
    const theirs = typeof peer === "string" ? SHAPES.map(() => NaN) : [
      ...peerOutput(runPeer(peer, [peerScript("mm_bf16.py"), String(threads), JSON.stringify(SHAPES.map((s) => s.slice(1)))], threads), "mm_bf16.py").matchAll(/median=([\d.]+)/g),
    ].map((m) => Number(m[1]));
    SHAPES.forEach((s, i) => {
      const { f32, bf16 } = operands(s);
      const fp32 = gflops(s, (c) => cpu.matmul(c), ...f32);
      const perPath = paths.map((p) => onPath(p, () => gflops(s, (c) => cpu.matmulBf16(c), ...f32)));
      const fromBf16 = gflops(s, (c) => cpu.matmulBf16(c), ...bf16);
      rows.push([s[0], String(threads), fp32, ...perPath, fromBf16, perPath[0] / fp32, theirs[i], fromBf16 / theirs[i]]);
    });
  }
  console.log();
  printTable(
    ["shape (m x n x k)", "threads", "fp32 kernel", ...paths.map((p) => `${p} (fp32 in)`), `${best} (bf16 in)`, `${paths[0]} / fp32`, "PyTorch bf16", "bf16 in / PyTorch"],
    rows,
  );
  console.log("(GFLOPS; bf16 columns: backend.matmulBf16, float32 output; PyTorch: torch.matmul of bfloat16 tensors, bfloat16 output)");
}

main();
