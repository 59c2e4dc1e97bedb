// node --import tsx bench/fsdp.ts [--no-peer]
// FSDP throughput and memory: bench/gpt.ts's GPT (4 layers, d=256, seq 128, vocab 8192, batch 8 per
// rank, AdamW) on 2 ranks of one thread each, trained by ringtorch DDP and by ringtorch FSDP under
// each sharding strategy (every Transformer layer a unit), each in its own ringrun job so that
// peak RSS per rank is its own (bench/workers/fsdp_gpt.ts); beside PyTorch's FSDP2 (fully_shard) and
// DDP over gloo (bench/torch/fsdp.py), run by the peer bench/peer.ts chooses. Total tokens/s; for
// ringtorch also the time rank 0 spent blocked on communication per step (what prefetch and
// overlap leave exposed) and its tensor arena's peak, the tensor part of RSS.
import { execFileSync } from "node:child_process";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";

interface RankResult {
  mode: string;
  rank: number;
  rates: number[];
  rssMb: number;
  waitMsPerStep: number[];
  arenaMb: number;
}

interface Row {
  rate: number;
  rss: number[];
  /** ringtorch only: rank 0's median ms per step blocked on communication, and its tensor arena's peak (held + kept free). */
  waitMs?: number;
  arenaMb?: number;
}

function ringtorch(mode: string): Row {
  const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/fsdp_gpt.ts"], {
    env: { ...process.env, RINGTORCH_NUM_THREADS: "1", MODE: mode },
  }).toString();
  const results = out
    .split("\n")
    .filter((l) => l.includes("RESULT "))
    .map((l) => JSON.parse(l.slice(l.indexOf("RESULT ") + 7)) as RankResult)
    .sort((a, b) => a.rank - b.rank);
  if (results.length !== 2) throw new Error(`bench/fsdp: expected 2 results from ringtorch ${mode}:\n${out}`);
  return { rate: median(results[0].rates), rss: results.map((r) => r.rssMb), waitMs: median(results[0].waitMsPerStep), arenaMb: results[0].arenaMb };
}

const peer = process.argv.includes("--no-peer") ? "not asked for (--no-peer)" : findPeer();
console.log(describePeer(peer, 1));

function torch(mode: "fsdp" | "ddp"): Row | null {
  if (typeof peer === "string") return null;
  const r = runPeer(peer, [peerScript("fsdp.py"), mode], 1);
  if (r.status !== 0) {
    console.log(`PyTorch ${mode} failed: ${r.stderr.trim().split("\n").slice(-2).join(" / ")}`);
    return null;
  }
  // The two ranks print at once, so their lines may run together: match records, not lines.
  const ranks = [...r.stdout.matchAll(/rank=(\d+) \w+ tokens\/s runs=\[[^\]]*\] median=(\d+) rss_mb=(\d+)/g)].sort((a, b) => Number(a[1]) - Number(b[1]));
  if (ranks.length !== 2) return null;
  return { rate: Number(ranks[0][2]), rss: ranks.map((m) => Number(m[3])) };
}

const rows: [string, Row | null][] = [
  ["ringtorch DDP", ringtorch("ddp")],
  ["ringtorch FSDP FULL_SHARD", ringtorch("FULL_SHARD")],
  ["ringtorch FSDP SHARD_GRAD_OP", ringtorch("SHARD_GRAD_OP")],
  ["ringtorch FSDP NO_SHARD", ringtorch("NO_SHARD")],
  ["PyTorch FSDP2 (gloo)", torch("fsdp")],
  ["PyTorch DDP (gloo)", torch("ddp")],
];
const ddp = rows[0][1]!.rate;
const ptFsdp = rows[4][1]?.rate ?? NaN;
console.log("GPT L=4 D=256 T=128 V=8192, AdamW, batch 8 per rank, 2 ranks × 1 thread: total tokens/s");
printTable(
  ["configuration", "tokens/s", "step time vs ringtorch DDP", "vs PyTorch FSDP2", "peak RSS rank 0 (MB)", "rank 1 (MB)", "comm wait ms/step", "arena peak (MB)"],
  rows.map(([name, r]) => [name, r?.rate ?? NaN, r ? ddp / r.rate : NaN, r ? r.rate / ptFsdp : NaN, r?.rss[0] ?? NaN, r?.rss[1] ?? NaN, r?.waitMs ?? NaN, r?.arenaMb ?? NaN]),
);
console.log("targets: FULL_SHARD step time ≤ 1.15× ringtorch DDP's; ≥ 2× PyTorch FSDP2's throughput; peak RSS per rank below DDP's");
