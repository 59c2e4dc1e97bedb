// node --import tsx --conditions=source bench/attention.ts [--heads 4] [--dim 64] [--lengths 256,512,1024,2048,4096,8192] [--no-peer]
//
// The fused nn.functional.scaledDotProductAttention (causal, float32, batch 1, one thread) against
// the same attention composed from matmul and softmax, and against PyTorch's SDPA: milliseconds of
// a forward and backward, and the memory each takes. Memory is measured per length in a fresh
// process (peak RSS after the step minus before it), so the composed path's L×S score matrices
// show as quadratic growth and the fused kernel's tiles as linear. The composed path stops at 4096
// (its scores alone would be 1 GiB at 8192 with 4 heads).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as rt from "../src/index.js";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";
import { childNodeFlags } from "../src/launch/young_generation.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const heads = Number(option("--heads", "4"));
const dim = Number(option("--dim", "64"));

/** One (length, mode) in this process: median ms of 3 steps after one warm-up, and the RSS growth. */
function measureOne(l: number, mode: "fused" | "composed"): { ms: number; rssMb: number } {
  rt.setNumThreads(1);
  const before = process.resourceUsage().maxRSS;
  const gen = new rt.Generator(0);
  const [q, k, v] = [0, 1, 2].map(() => rt.randn([1, heads, l, dim], { generator: gen }).requiresGrad_());
  const mask = mode === "composed" ? rt.nn.generateSquareSubsequentMask(l) : null;
  const step = () => {
    const y =
      mode === "fused"
        ? rt.nn.functional.scaledDotProductAttention(q, k, v, { isCausal: true })
        : rt.matmul(rt.softmax(rt.add(rt.mul(rt.matmul(q, rt.transpose(k, -2, -1)), 1 / Math.sqrt(dim)), mask!), -1), v);
    y.sum().backward();
  };
  step();
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    step();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), rssMb: (process.resourceUsage().maxRSS - before) / 1024 };
}

function inChild(l: number, mode: string): { ms: number; rssMb: number } {
  const r = spawnSync(process.execPath, [...childNodeFlags(process.execArgv, process.env), "--import", "tsx", "--conditions=source", fileURLToPath(import.meta.url), "--one", String(l), mode, "--heads", String(heads), "--dim", String(dim)], { encoding: "utf8", env: { ...process.env, RINGTORCH_NUM_THREADS: "1" } });
  if (r.status !== 0) throw new Error(`attention bench child (${mode}, L=${l}) failed: ${r.stderr.trim().split("\n").slice(-3).join(" / ")}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

if (args.includes("--one")) {
  const i = args.indexOf("--one");
  console.log(JSON.stringify(measureOne(Number(args[i + 1]), args[i + 2] as "fused" | "composed")));
} else {
  const lengths = option("--lengths", "256,512,1024,2048,4096,8192").split(",").map(Number);
  let peer: Map<number, { ms: number; rss: number }> | string = "skipped (--no-peer)";
  if (!args.includes("--no-peer")) {
    const p = findPeer();
    console.log(describePeer(p, 1));
    if (typeof p === "string") peer = p;
    else {
      const r = runPeer(p, [peerScript("sdpa.py"), String(heads), String(dim), ...lengths.map(String)], 1);
      if (r.status !== 0) peer = `the PyTorch peer failed: ${r.stderr.trim().split("\n").pop()}`;
      else {
        peer = new Map();
        for (const line of r.stdout.trim().split("\n")) {
          const j = JSON.parse(line) as { L: number; ms: number; maxrss_mb: number };
          peer.set(j.L, { ms: j.ms, rss: j.maxrss_mb });
        }
      }
    }
  }
  const rows: (string | number)[][] = [];
  for (const l of lengths) {
    const fused = inChild(l, "fused");
    const composed = l <= 4096 ? inChild(l, "composed") : null;
    const p = typeof peer === "string" ? undefined : peer.get(l);
    rows.push([l, fused.ms, composed?.ms ?? "-", p?.ms ?? "-", p ? p.ms / fused.ms : "-", fused.rssMb, composed?.rssMb ?? "-", p?.rss ?? "-"]);
  }
  console.log(`\ncausal attention, batch 1, ${heads} heads of ${dim}, float32, forward + backward, 1 thread`);
  printTable(["L", "fused ms", "composed ms", "PyTorch SDPA ms", "PyTorch/fused (speed)", "fused +RSS MB", "composed +RSS MB", "PyTorch peak RSS MB (cumulative)"], rows);
  if (typeof peer === "string") console.log(`(PyTorch peer not measured: ${peer})`);
}
