// node --import tsx --conditions=source bench/gpt2.ts [--only train,ddp,generate] [--no-peer]
//
// GPT-2 (6 layers, d=384, 6 heads, seq 256, vocab 50257, batch 4) and BERT-mini (4 layers, d=256,
// seq 128, batch 16, sequence classification) beside transformers on the strongest PyTorch here
// (bench/torch/gpt2.py: SDPA attention, fused AdamW), in one run:
//   train gpt2|bert      training tokens/s on one thread
//   ddp gpt2|bert        the same under DDP on 2 ranks of one thread each (ringrun; PyTorch DDP on
//                        gloo), total tokens/s of both ranks
//   generate cache=on    GPT-2 greedy generation tokens/s (the same 32-token prompt, 64 new tokens),
//                        KV cache on for both; cache=off recomputes the prefix each step
// Every workload of either side runs in a fresh process of its own, so that each peak RSS is that
// workload's alone (rank 0's under DDP); ringtorch's and PyTorch's processes alternate, so that
// their ratio sees the same machine. `--only` picks kinds; `--ddp` is accepted for older commands.
// Protocol on both sides: WARMUP steps, then the median of RUNS timings of STEPS steps (env, defaults
// 2, 5, 3; a generation is one step).
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as rt from "../src/index.js";
import { build, measurement, timed, trainer, GPT2, type Measurement, type Which } from "./gpt2_workload.js";
import { describePeer, findPeer, peerScript, runPeer, type Peer } from "./peer.js";
import { printTable } from "./table.js";
import { childNodeFlags } from "../src/launch/young_generation.js";

const WORKLOADS = ["train gpt2", "train bert", "ddp gpt2", "ddp bert", "generate cache=on", "generate cache=off"] as const;
type Workload = (typeof WORKLOADS)[number];
const KINDS = ["train", "ddp", "generate"];
const TIMEOUT_MS = 1_800_000;

const args = process.argv.slice(2);
function flag(name: string): string | null {
  const i = args.indexOf(name);
  if (i < 0) return null;
  if (i + 1 >= args.length) throw new Error(`bench/gpt2.ts: ${name} needs a value`);
  return args[i + 1];
}
for (const [i, a] of args.entries()) {
  const known = ["--only", "--workload", "--no-peer", "--ddp"];
  if (a.startsWith("--") && !known.includes(a)) throw new Error(`bench/gpt2.ts: unknown argument ${a} (expected ${known.join(", ")})`);
  if (!a.startsWith("--") && !["--only", "--workload"].includes(args[i - 1])) throw new Error(`bench/gpt2.ts: unexpected argument ${a}`);
}

/** One workload in this process: prints its measurement as `RESULT {json}`. */
function runHere(w: Workload): void {
  rt.setNumThreads(1);
  let m: Measurement;
  if (w.startsWith("train ")) {
    const { model, loss, tokens } = build(w.slice(6) as Which);
    m = measurement(w, timed(trainer(model, model, loss), tokens));
  } else {
    rt.manualSeed(0);
    const model = new rt.models.GPT2LMHeadModel(GPT2).eval();
    const prompt = rt.tensor(Array.from({ length: 32 }, (_, i) => (i * 1009) % GPT2.vocab_size), { dtype: "int32", shape: [1, 32] }); // bench/torch/gpt2.py's prompt
    const useCache = w === "generate cache=on";
    m = measurement(w, timed(() => void rt.models.generate(model, prompt, { maxNewTokens: 64, useCache }), 64, 1));
  }
  console.log(`RESULT ${JSON.stringify(m)}`);
}

/** The one measurement a child printed (a JSON object, after ringrun's rank prefix if any), or why there is none. */
function parsed(r: SpawnSyncReturns<string>): Measurement | string {
  const marker = '{"what":';
  const found = (r.stdout ?? "").split("\n").flatMap((l) => (l.includes(marker) ? [JSON.parse(l.slice(l.indexOf(marker))) as Measurement] : []));
  if (r.status === 0 && found.length === 1) return found[0];
  return `failed (${r.error?.message ?? `exit ${r.status}`}, ${found.length} results): ${(r.stderr || "").trim().split("\n").slice(-3).join(" / ")}`;
}

/** ringtorch's measurement of w, from a fresh process (ringrun's rank 0 under DDP). */
function ours(w: Workload): Measurement | string {
  const env = { ...process.env, RINGTORCH_NUM_THREADS: "1" };
  const r = w.startsWith("ddp ")
    ? spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/gpt2_ddp.ts"], { encoding: "utf8", env: { ...env, WHICH: w.slice(4) }, timeout: TIMEOUT_MS, maxBuffer: 64 << 20 })
    : spawnSync(process.execPath, [...childNodeFlags(process.execArgv, process.env), "--import", "tsx", "--conditions=source", fileURLToPath(import.meta.url), "--workload", w], { encoding: "utf8", env, timeout: TIMEOUT_MS, maxBuffer: 64 << 20 });
  return parsed(r);
}

/** The peer's measurement of w, from its own fresh python process (its rank 0 under DDP). */
function theirs(peer: Peer, w: Workload): Measurement | string {
  const [kind, what] = w.split(" ");
  const argv = kind === "generate" ? ["generate", what === "cache=on" ? "on" : "off"] : [kind, what];
  const r = runPeer(peer, [peerScript("gpt2.py"), ...argv], 1, {}, TIMEOUT_MS);
  return parsed(r);
}

const one = flag("--workload");
if (one !== null) {
  if (!(WORKLOADS as readonly string[]).includes(one)) throw new Error(`bench/gpt2.ts: --workload must be one of ${WORKLOADS.join(", ")}, got ${one}`);
  runHere(one as Workload);
} else {
  const only = flag("--only")?.split(",") ?? KINDS;
  for (const k of only) if (!KINDS.includes(k)) throw new Error(`bench/gpt2.ts: --only takes ${KINDS.join(",")} (comma-separated), got ${k}`);
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : findPeer();
  console.log(describePeer(peer, 1));
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const w of WORKLOADS.filter((x) => only.includes(x.split(" ")[0]))) {
    const m = ours(w);
    const t = typeof peer === "string" ? peer : theirs(peer, w);
    if (typeof m === "string") notes.push(`ringtorch ${w}: ${m}`);
    if (typeof t === "string" && typeof peer !== "string") notes.push(`PyTorch ${w}: ${t}`);
    const mm = typeof m === "string" ? null : m;
    const tt = typeof t === "string" ? null : t;
    const row = [w, mm?.median ?? "-", mm?.max ?? "-", tt?.median ?? "-", mm && tt ? mm.median / tt.median : "-", mm?.maxrss_mb ?? "-", tt?.maxrss_mb ?? "-", mm && tt ? mm.maxrss_mb / tt.maxrss_mb : "-"];
    console.log(`  ${w}: ${row.slice(1).map((v) => (typeof v === "number" ? v.toFixed(2) : v)).join("  ")}`);
    rows.push(row);
  }
  console.log("\nGPT-2 6L d384 seq256 vocab 50257 batch 4; BERT-mini 4L d256 seq128 batch 16; generation: 32-token prompt, 64 new tokens, greedy");
  console.log("tokens/s (higher is better; ddp: both ranks together), 1 thread per process; peak RSS of each workload in its own process (ddp: rank 0)");
  printTable(["workload", "ringtorch median", "ringtorch best", "PyTorch median", "ringtorch/PyTorch", "ringtorch peak RSS MB", "PyTorch peak RSS MB", "RSS ratio"], rows);
  if (typeof peer === "string") console.log(`(PyTorch peer not measured: ${peer})`);
  for (const n of notes) console.log(n);
  if (notes.length) process.exitCode = 1;
}
