// node --import tsx --conditions=source bench/mlp.ts [--runs 5] [--steps 200] [--threads 1] [--no-peer]
//
// MLP 784-1024-1024-10, Adam, batch 64, cross-entropy, one thread on each side (--threads): training samples/s of ringtorch
// and of the strongest PyTorch here (bench/peer.ts; bench/torch/mlp.py, the same protocol: 20 warm-up steps, then the median
// of `runs` timings of `steps` steps), measured in this one run, with each side's peak resident memory.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { backendName, getBackend, manualSeed, randint, randn } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { describeNewSpace, parseRankRss } from "./rss.js";

export { peerScript };

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const runs = option("--runs", 5);
const steps = option("--steps", 200);
const B = 64;

export interface Measured {
  median: number;
  max: number;
  /** Peak RSS in MB of each rank's own process (one entry for a one-process run). */
  rssMb: number[];
}

function ringtorch(): Measured {
  manualSeed(0);
  const model = new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10));
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const lossFn = new nn.CrossEntropyLoss();
  const x = randn([B, 784]);
  const y = randint(0, 10, [B]);
  const step = () => {
    opt.zeroGrad();
    const loss = lossFn.call(model.call(x), y);
    loss.backward();
    opt.step();
  };
  for (let i = 0; i < 20; i++) step();
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step();
    rates.push((steps * B) / ((performance.now() - t0) / 1000));
  }
  console.log(`ringtorch (${backendName()} backend) samples/s runs=[${rates.map(Math.round).join(", ")}]`);
  console.log(`ringtorch's ${describeNewSpace()}`);
  return { median: median(rates), max: Math.max(...rates), rssMb: [process.resourceUsage().maxRSS / 1024] };
}

/** Pins the cpu backend's thread pool (both sides of the comparison run on one thread by default). */
export function setThreads(n: number): void {
  (getBackend() as { setNumThreads?: (n: number) => void }).setNumThreads?.(n);
}

/**
 * Runs a peer script (bench/torch/) under the strongest PyTorch here, reporting its "median=" figure
 * and the peak RSS of each rank's process: the `peak_rss` lines its ranks print (bench/rss.ts), or
 * for a one-process script its own. Never the peak of a launcher such as mp.spawn's parent, which
 * only imports torch (the DDP figures compared a rank against it before: 219 MB against a rank's 394).
 */
export function torchPeer(script: string, threads: number, argv: readonly string[] = []): Measured | string {
  const peer = findPeer();
  console.log(describePeer(peer, threads));
  if (typeof peer === "string") return peer;
  if (!existsSync(script)) return `${script} not found`;
  const wrapper = `import resource, runpy, sys; sys.argv = ${JSON.stringify([script, ...argv])}; runpy.run_path(${JSON.stringify(script)}, run_name="__main__"); print("maxrss_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)`;
  const r = runPeer(peer, ["-c", wrapper], threads);
  if (r.status !== 0) return `the PyTorch peer failed: ${(r.stderr || r.error?.message || "").trim().split("\n").pop()}`;
  process.stdout.write(r.stdout.split("\n").filter((l) => !l.startsWith("maxrss_kb") && !l.startsWith("peak_rss")).join("\n"));
  const m = /median=(\d+(?:\.\d+)?)/.exec(r.stdout);
  const max = /max=(\d+(?:\.\d+)?)/.exec(r.stdout);
  const rss = /maxrss_kb (\d+)/.exec(r.stdout);
  if (!m || !max || !rss) return "could not read the PyTorch peer's output";
  const ranks = parseRankRss(r.stdout);
  return { median: Number(m[1]), max: Number(max[1]), rssMb: ranks.length > 0 ? ranks : [Number(rss[1]) / 1024] };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The comparison table: the median run (the headline), the best run, and each rank's peak resident memory. */
export function printTable(unit: string, ours: Measured, peer: Measured | string): void {
  const rows: string[][] = [["", "ringtorch", "PyTorch", "ringtorch / PyTorch"]];
  const row = (label: string, a: number, b: number | undefined) => [label, a.toFixed(0), b === undefined ? "-" : b.toFixed(0), b === undefined ? "-" : (a / b).toFixed(2) + "x"];
  const p = typeof peer === "string" ? undefined : peer;
  rows.push(row(`${unit} (median run)`, ours.median, p?.median), row(`${unit} (best run)`, ours.max, p?.max));
  ours.rssMb.forEach((mb, rank) => rows.push(row(ours.rssMb.length > 1 ? `peak RSS rank ${rank} (MB)` : "peak RSS (MB)", mb, p?.rssMb[rank])));
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log("| " + r.map((v, c) => v.padEnd(widths[c])).join(" | ") + " |");
  if (typeof peer === "string") console.log(`(PyTorch peer not measured: ${peer})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const threads = option("--threads", 1);
  setThreads(threads);
  const ours = ringtorch();
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : torchPeer(peerScript("mlp.py"), threads);
  console.log(`\nMLP 784-1024-1024-10, Adam, batch 64, ${threads} thread(s) (median of runs)`);
  printTable("samples/s", ours, peer);
}
