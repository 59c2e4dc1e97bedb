// node --import tsx --conditions=source bench/bf16_gpt.ts [--steps 300] [--threads 1] [--no-peer] [--only fp32|bf16] [--window 50] [--alternate]
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
// --alternate trains both in one process taking turns step by step, each timed over its own steps:
// on a shared machine whose speed drifts, the ratio then compares like with like.
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
  private wallMs = 0;
  private cpuUs = 0;
  private losses: number[] = [];

  constructor(private readonly size: number) {}

  /** Step `i` (0-based) took `wallMs` and `cpuUs` of the process's CPU; closes a window every `size` steps after the warm-up, and at `last`. */
  step(i: number, loss: number, wallMs: number, cpuUs: number, last: number): void {
    if (i < WARMUP) return;
    this.losses.push(loss);
    this.wallMs += wallMs;
    this.cpuUs += cpuUs;
    if ((i + 1 - WARMUP) % this.size !== 0 && i !== last) return;
    const n = this.losses.length;
    this.rows.push(`${i + 1 - n + 1}-${i + 1}: ${((n * B * T) / (this.wallMs / 1000)).toFixed(0)} tok/s, ${(this.cpuUs / 1000 / n).toFixed(0)} cpu ms, loss ${(this.losses.reduce((a, b) => a + b, 0) / n).toFixed(4)}`);
    this.losses = [];
    this.wallMs = this.cpuUs = 0;
  }

  toString(): string {
    return this.rows.join(" | ");
  }
}

/**
 * One precision's training run, a step at a time, so that two runs can take turns (--alternate):
 * its tokens/s counts only its own steps' wall time, so a spell when the machine is slower for
 * everyone falls on both precisions instead of on whichever ran then.
 */
class Run {
  private readonly model = new GPT();
  private readonly opt: optim.AdamW;
  private readonly losses: number[] = [];
  private ms = 0;

  constructor(
    readonly low: boolean,
    private readonly batches: [Tensor, Tensor][],
    state: StateDict,
    readonly windows: Windows,
  ) {
    this.model.loadStateDict(state);
    this.opt = new optim.AdamW(this.model.parameters(), { lr: 3e-4 });
  }

  step(i: number, last: number): void {
    const t0 = performance.now(), cpu0 = process.cpuUsage();
    const [idx, tgt] = this.batches[i % this.batches.length];
    this.opt.zeroGrad();
    const logits = autocast("bfloat16", { enabled: this.low }, () => this.model.call(idx).reshape([-1, V]));
    const loss = crossEntropy(logits, tgt);
    loss.backward();
    this.opt.step();
    this.losses.push(loss.item());
    const ms = performance.now() - t0, cpu = process.cpuUsage(cpu0);
    if (i >= WARMUP) this.ms += ms;
    this.windows.step(i, this.losses[i], ms, cpu.user + cpu.system, last);
  }

  result(): Result {
    const tail = this.losses.slice(-10);
    return { tokensPerS: ((this.losses.length - WARMUP) * B * T) / (this.ms / 1000), finalLoss: tail.reduce((a, b) => a + b, 0) / tail.length };
  }
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
  // Sequential by default (one precision's whole run, then the other's); --alternate interleaves their steps.
  const runs = [false, true].filter((low) => only !== (low ? "fp32" : "bf16")).map((low) => new Run(low, batches, state, new Windows(window)));
  if (args.includes("--alternate")) {
    for (let i = 0; i < steps; i++) for (const r of runs) r.step(i, steps - 1);
  } else {
    for (const r of runs) for (let i = 0; i < steps; i++) r.step(i, steps - 1);
  }
  const results = new Map<boolean, Result>();
  for (const r of runs) {
    const res = r.result();
    results.set(r.low, res);
    console.log(`ringtorch ${r.low ? "bf16" : "fp32"} tokens/s=${res.tokensPerS.toFixed(0)} final_loss=${res.finalLoss.toFixed(4)}`);
    console.log(`  by ${window} steps: ${r.windows}`);
  }
  const fp32 = results.get(false), bf16 = results.get(true);
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
