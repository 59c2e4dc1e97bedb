// node --import tsx --conditions=source bench/bf16_gpt_profile.ts [--steps 12] [--only fp32|bf16] [--callers] [--shapes] [--clock wall|cpu]
//
// Where one training step of bench/bf16_gpt.ts spends its time: every method of the active backend
// is wrapped with a timer (outermost calls only, so a method that calls another is counted once),
// and what is left of the step's wall time is JavaScript (op dispatch, autograd, allocation) and
// garbage collection. --callers splits each backend method by the ops function that called it
// (reads a stack per call: slower, use for the split, not the totals). --shapes splits the
// GEMMs by size and operand layout (N row-major, T transposed, S other strides). --clock cpu times the
// calls and steps by the process's CPU time instead of wall time: on a shared machine a call's wall
// time counts whatever ran in its place (a loaded run read the bf16 GEMMs 217 ms a step by wall
// time, 176 by CPU time), while its CPU time stays near what a quiet run's wall time would read.
import { autocast, crossEntropy, getBackend, manualSeed, memoryPool, randint, type Tensor } from "../src/index.js";
import * as optim from "../src/optim/index.js";
import { GPT } from "./gpt.js";
import { clockFromArgs, secondsOn } from "./clock.js";
import { setThreads } from "./mlp.js";

const [V, T, B] = [8192, 128, 8];
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const steps = Number(option("--steps", "12"));
const only = option("--only", "");
const callers = args.includes("--callers");
const shapes = args.includes("--shapes");
const clock = clockFromArgs(args);
const seconds = secondsOn(clock);
const now = (): number => seconds() * 1000;
const WARMUP = 3;

const times = new Map<string, { ms: number; calls: number }>();
let depth = 0;
let counting = false;

/** The first frame under src/ops/ or src/nn/ or src/optim/ above the backend call (for --callers). */
function caller(): string {
  const lines = (new Error().stack ?? "").split("\n").slice(3);
  for (const l of lines) {
    const m = /at (?:\S+ \()?.*\/src\/((?:ops|nn|optim|autograd|tensor)\/[^:]+):(\d+)/.exec(l);
    if (m && !m[1].startsWith("backend")) return `${m[1]}:${m[2]}`;
  }
  return "?";
}

const backend = getBackend() as unknown as Record<string, unknown>;
for (const name of Object.keys(backend)) {
  const f = backend[name];
  if (typeof f !== "function" || name === "name") continue;
  backend[name] = function (this: unknown, ...a: unknown[]) {
    if (!counting || depth > 0) return (f as (...x: unknown[]) => unknown).apply(this, a);
    depth++;
    const t0 = now();
    try {
      return (f as (...x: unknown[]) => unknown).apply(this, a);
    } finally {
      const ms = now() - t0;
      depth--;
      let key = callers ? `${name} <- ${caller()}` : name;
      if (shapes && name.startsWith("matmul")) {
        const m = a[0] as Record<string, number>;
        const layout = (r: number, c: number) => (c === 1 ? "N" : r === 1 ? "T" : "S");
        key += ` b${m.batch} m${m.m} n${m.n} k${m.k} a${layout(m.aRowStride, m.aColStride)} b${layout(m.bRowStride, m.bColStride)}${m.beta ? " +C" : ""}`;
      }
      const e = times.get(key) ?? { ms: 0, calls: 0 };
      e.ms += ms;
      e.calls++;
      times.set(key, e);
    }
  };
}

function profile(low: boolean): void {
  setThreads(1);
  manualSeed(0);
  const model = new GPT();
  const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
  const idx = randint(0, V, [B, T]);
  const tgt = randint(0, V, [B * T]);
  times.clear();
  let wall = 0;
  let before = memoryPool.stats();
  for (let i = 0; i < steps; i++) {
    counting = i >= WARMUP;
    if (i === WARMUP) before = memoryPool.stats();
    const t0 = now();
    opt.zeroGrad();
    const logits = autocast("bfloat16", { enabled: low }, () => model.call(idx).reshape([-1, V]));
    const loss: Tensor = crossEntropy(logits, tgt);
    loss.backward();
    opt.step();
    loss.item();
    if (counting) wall += now() - t0;
  }
  counting = false;
  const n = steps - WARMUP;
  const after = memoryPool.stats();
  let inBackend = 0;
  for (const e of times.values()) inBackend += e.ms;
  console.log(`\n${low ? "bf16 (autocast)" : "fp32"}: ${(wall / n).toFixed(1)} ms/step${clock === "cpu" ? " of process CPU" : ""} over ${n} steps, ${(((wall / n) / 1000) ** -1 * B * T).toFixed(0)} tokens/s`);
  const rows = [...times.entries()].sort((a, b) => b[1].ms - a[1].ms);
  for (const [k, e] of rows.slice(0, 40)) {
    console.log(`  ${(e.ms / n).toFixed(2).padStart(7)} ms ${((100 * e.ms) / wall).toFixed(1).padStart(5)}%  ${String(e.calls / n).padStart(5)} calls  ${k}`);
  }
  console.log(`  ${((wall - inBackend) / n).toFixed(2).padStart(7)} ms ${((100 * (wall - inBackend)) / wall).toFixed(1).padStart(5)}%  JavaScript and GC outside backend calls`);
  if (before && after) {
    const per = (k: "fresh" | "recycled" | "collections" | "fullCollections", mb: boolean) => ((after[k] - before[k]) / n / (mb ? 2 ** 20 : 1)).toFixed(mb ? 1 : 2);
    console.log(`  arena per step: ${per("fresh", true)} MB fresh (pages faulted in), ${per("recycled", true)} MB recycled, ${per("collections", false)} scavenges, ${per("fullCollections", false)} full collections asked for`);
  }
}

if (only !== "bf16") profile(false);
if (only !== "fp32") profile(true);
