// node --import tsx --conditions=source bench/bf16_gpt.ts [--steps 300] [--threads 1] [--no-peer] [--only fp32|bf16] [--window 50]
//
// The GPT of bench/gpt.ts trained `steps` steps in float32 and under autocast("bfloat16"), from the
// same weights on the same 4 fixed batches (a memorisation task, so the loss keeps falling), beside
// bench/torch/bf16_gpt.py doing the same with torch.autocast on the strongest PyTorch here. Prints
// tokens/s (after 3 warm-up steps) and the final loss (mean of the last 10 steps) of each.
// Targets (issue 16): bf16 ≥ 1.6× ringtorch fp32's tokens/s with its loss within 1%, and ≥ 1.2× PyTorch's autocast bf16.
// --only trains one precision (with --no-peer, so that two processes pinned to two cores can
// take the two halves of the run at once: bench/isa_report.sh does that).
// Each precision also prints its run in windows of --window steps: tokens/s, the process's CPU ms
// per step (all its threads, the collector's helpers included) and the loss, so that a run which
// slows down shows when, and whether in CPU work or only in wall time (a loaded machine).
import { pathToFileURL } from "node:url";
import { autocast, backendName, crossEntropy, getBackend, manualSeed, randint, type Tensor } from "../src/index.js";
import type { StateDict } from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { GPT } from "./gpt.js";
import { setThreads } from "./mlp.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer } from "./peer.js";

const [V, T, B] = [8192, 128, 8];
const WARMUP = 3;

interface Result {
  tokensPerS: number;
  finalLoss: number;
}

/** Per window of steps: wall tokens/s, process CPU ms per step, mean loss (the first window starts after the warm-up). */
class Windows {
  private readonly rows: string[] = [];
  private wall0 = 0;
  private cpu0 = process.cpuUsage();
  private losses: number[] = [];

  constructor(private readonly size: number) {}

  start(): void {
    this.wall0 = performance.now();
    this.cpu0 = process.cpuUsage();
    this.losses = [];
  }

  /** After step `i` (0-based); closes a window every `size` steps after the warm-up, and at `last`. */
  step(i: number, loss: number, last: number): void {
    if (i < WARMUP) return;
    this.losses.push(loss);
    if ((i + 1 - WARMUP) % this.size !== 0 && i !== last) return;
    const n = this.losses.length;
    const cpu = process.cpuUsage(this.cpu0);
    const wall = performance.now() - this.wall0;
    this.rows.push(`${i + 1 - n + 1}-${i + 1}: ${((n * B * T) / (wall / 1000)).toFixed(0)} tok/s, ${((cpu.user + cpu.system) / 1000 / n).toFixed(0)} cpu ms, loss ${(this.losses.reduce((a, b) => a + b, 0) / n).toFixed(4)}`);
    this.start();
  }

  toString(): string {
    return this.rows.join(" | ");
  }
}

function train(low: boolean, steps: number, batches: [Tensor, Tensor][], state: StateDict, windows: Windows): Result {
  const model = new GPT();
  model.loadStateDict(state);
  const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
  const losses: number[] = [];
  let t0 = performance.now();
  for (let i = 0; i < steps; i++) {
    if (i === WARMUP) {
      t0 = performance.now();
      windows.start();
    }
    const [idx, tgt] = batches[i % batches.length];
    opt.zeroGrad();
    const logits = autocast("bfloat16", { enabled: low }, () => model.call(idx).reshape([-1, V]));
    const loss = crossEntropy(logits, tgt);
    loss.backward();
    opt.step();
    losses.push(loss.item());
    windows.step(i, losses[i], steps - 1);
  }
  const tail = losses.slice(-10);
  return { tokensPerS: ((steps - WARMUP) * B * T) / ((performance.now() - t0) / 1000), finalLoss: tail.reduce((a, b) => a + b, 0) / tail.length };
}

function peer(steps: number, threads: number): { fp32: Result; bf16: Result } | string {
  const p = findPeer();
  console.log(describePeer(p, threads));
  if (typeof p === "string") return p;
  const out = peerOutput(runPeer(p, [peerScript("bf16_gpt.py")], threads, { STEPS: String(steps) }, 3_600_000), "bf16_gpt.py");
  const read = (name: string): Result | null => {
    const m = new RegExp(`${name} tokens/s=(\\d+) final_loss=([\\d.]+)`).exec(out);
    return m ? { tokensPerS: Number(m[1]), finalLoss: Number(m[2]) } : null;
  };
  const fp32 = read("fp32"), bf16 = read("bf16");
  return fp32 && bf16 ? { fp32, bf16 } : `could not read the peer's output: ${out.trim().split("\n").pop()}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
  const steps = option("--steps", 300);
  const threads = option("--threads", 1);
  const window = option("--window", 50);
  if (!(Number.isInteger(window) && window > 0)) throw new RangeError(`--window must be a positive whole number of steps, got ${window}`);
  if (!(steps > WARMUP + 10)) throw new RangeError(`--steps must be more than ${WARMUP + 10}, got ${steps}`);
  setThreads(threads);
  manualSeed(0);
  const state = new GPT().stateDict();
  const batches: [Tensor, Tensor][] = Array.from({ length: 4 }, () => [randint(0, V, [B, T]), randint(0, V, [B * T])]);
  const path = (getBackend() as { bf16GemmPath?: () => string }).bf16GemmPath?.() ?? "reference";
  console.log(`ringtorch (${backendName()} backend, bfloat16 GEMM path ${path}), ${threads} thread(s), ${steps} steps`);
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : "";
  if (!["", "fp32", "bf16"].includes(only)) throw new RangeError(`--only must be fp32 or bf16, got ${JSON.stringify(only)}`);
  const trained = (low: boolean): Result | undefined => {
    if (only === (low ? "fp32" : "bf16")) return undefined;
    const windows = new Windows(window);
    const r = train(low, steps, batches, state, windows);
    console.log(`ringtorch ${low ? "bf16" : "fp32"} tokens/s=${r.tokensPerS.toFixed(0)} final_loss=${r.finalLoss.toFixed(4)}`);
    console.log(`  by ${window} steps: ${windows}`);
    return r;
  };
  const fp32 = trained(false);
  const bf16 = trained(true);
  const theirs = args.includes("--no-peer") ? "skipped (--no-peer)" : peer(steps, threads);
  const rows: string[][] = [["", "ringtorch fp32", "ringtorch bf16", "bf16 / fp32", "PyTorch fp32", "PyTorch bf16", "ringtorch bf16 / PyTorch bf16"]];
  const t = typeof theirs === "string" ? null : theirs;
  const f = (v: number | undefined, d: number) => (v === undefined ? "-" : v.toFixed(d));
  const ratio = (a: number | undefined, b: number | undefined, show: (r: number) => string) => (a === undefined || b === undefined ? "-" : show(a / b));
  rows.push(["tokens/s", f(fp32?.tokensPerS, 0), f(bf16?.tokensPerS, 0), ratio(bf16?.tokensPerS, fp32?.tokensPerS, (r) => r.toFixed(2) + "x"), f(t?.fp32.tokensPerS, 0), f(t?.bf16.tokensPerS, 0), ratio(bf16?.tokensPerS, t?.bf16.tokensPerS, (r) => r.toFixed(2) + "x")]);
  rows.push([`loss after ${steps} steps`, f(fp32?.finalLoss, 4), f(bf16?.finalLoss, 4), ratio(bf16?.finalLoss, fp32?.finalLoss, (r) => ((r - 1) * 100).toFixed(2) + "%"), f(t?.fp32.finalLoss, 4), f(t?.bf16.finalLoss, 4), "-"]);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log("| " + r.map((v, c) => v.padEnd(widths[c])).join(" | ") + " |");
  if (typeof theirs === "string") console.log(`(PyTorch peer not measured: ${theirs})`);
}
