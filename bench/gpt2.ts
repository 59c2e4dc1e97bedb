// node --import tsx --conditions=source bench/gpt2.ts [--ddp] [--no-peer] [--only train|generate]
//
// GPT-2 (6 layers, d=384, 6 heads, seq 256, vocab 50257, batch 4) and BERT-mini (4 layers, d=256,
// seq 128, batch 16, sequence classification): training tokens/s on one thread (and with --ddp on
// 2 ranks of one thread under ringrun), and GPT-2 greedy generation tokens/s (32-token prompt, 64 new
// tokens) with and without the KV cache, beside transformers on the strongest PyTorch here
// (bench/torch/gpt2.py: SDPA attention, fused AdamW), with each side's peak RSS. Protocol on both
// sides: WARMUP steps, then the median of RUNS timings of STEPS steps (env, defaults 2, 5, 3).
import { execFileSync } from "node:child_process";
import * as rt from "../src/index.js";
import { build, measurement, timed, trainer, GPT2, type Measurement } from "./gpt2_workload.js";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
rt.setNumThreads(1);

function ours(): Measurement[] {
  const out: Measurement[] = [];
  if (only !== "generate") {
    for (const which of ["gpt2", "bert"] as const) {
      const { model, loss, tokens } = build(which);
      out.push(measurement(`train ${which}`, timed(trainer(model, model, loss), tokens)));
    }
  }
  if (only !== "train") {
    rt.manualSeed(0);
    const model = new rt.models.GPT2LMHeadModel(GPT2).eval();
    const prompt = rt.randint(0, GPT2.vocab_size, [1, 32], { dtype: "int32" });
    for (const useCache of [true, false]) {
      out.push(measurement(`generate cache=${useCache ? "on" : "off"}`, timed(() => void rt.models.generate(model, prompt, { maxNewTokens: 64, useCache }), 64, 1)));
    }
  }
  if (args.includes("--ddp")) {
    const text = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/gpt2_ddp.ts"], { env: { ...process.env, RINGTORCH_NUM_THREADS: "1" }, maxBuffer: 64 << 20 }).toString();
    for (const line of text.split("\n")) if (line.includes("RESULT ")) out.push(JSON.parse(line.slice(line.indexOf("RESULT ") + 7)));
  }
  return out;
}

function peer(): Map<string, Measurement> | string {
  if (args.includes("--no-peer")) return "skipped (--no-peer)";
  const p = findPeer();
  console.log(describePeer(p, 1));
  if (typeof p === "string") return p;
  const jobs: string[][] = [];
  if (only !== "generate") jobs.push(["train", "gpt2"], ["train", "bert"]);
  if (only !== "train") jobs.push(["generate"]);
  if (args.includes("--ddp")) jobs.push(["ddp", "gpt2"], ["ddp", "bert"]);
  const got = new Map<string, Measurement>();
  for (const job of jobs) {
    const r = runPeer(p, [peerScript("gpt2.py"), ...job], 1);
    if (r.status !== 0) return `the PyTorch peer failed (${job.join(" ")}): ${r.stderr.trim().split("\n").pop()}`;
    for (const line of r.stdout.trim().split("\n")) if (line.startsWith("{")) got.set((JSON.parse(line) as Measurement).what, JSON.parse(line));
  }
  return got;
}

const mine = ours();
const theirs = peer();
const rows = mine.map((m) => {
  const t = typeof theirs === "string" ? undefined : theirs.get(m.what);
  return [m.what, m.median, m.max, t?.median ?? "-", t ? m.median / t.median : "-", m.maxrss_mb, t?.maxrss_mb ?? "-", t ? m.maxrss_mb / t.maxrss_mb : "-"];
});
console.log("\nGPT-2 6L d384 seq256 vocab 50257 batch 4; BERT-mini 4L d256 seq128 batch 16; tokens/s (higher is better), 1 thread per rank");
printTable(["workload", "ringtorch median", "ringtorch best", "PyTorch median", "ringtorch/PyTorch", "ringtorch peak RSS MB", "PyTorch peak RSS MB", "RSS ratio"], rows);
if (typeof theirs === "string") console.log(`(PyTorch peer not measured: ${theirs})`);
