// node --import tsx bench/ddp.ts
// DDP throughput: the MLP 784-1024-1024-10 with Adam, batch 64 per rank, on 2 ranks of one thread
// each. ringtorch trains it with DistributedDataParallel (as configured by default, and with its
// reduction forced to overlap backward), without any synchronisation, with only a barrier per
// step, and with one blocking all-reduce of the gradients after backward and no DDP, in turns
// inside one job (bench/workers/ddp_mlp.ts), so that all five see the same machine. The strongest PyTorch's DDP over gloo and its unsynchronised run
// (bench/torch/ddp.py, chosen by bench/peer.ts) are measured in the same run. Total samples/s; higher is better.
// Peak RSS per rank comes from a second, shorter job that trains DDP alone (MODES=ddp): the first
// holds five models and their optimizers at once, the peer's process one.
import { execFileSync } from "node:child_process";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { parseRankRss } from "./rss.js";
import { median, printTable } from "./table.js";

interface Result {
  runs: { ddp: number[]; overlap: number[]; noddp: number[]; barrier: number[]; serial: number[] };
  autoOverlaps: boolean;
  /** Peak RSS of each rank, in MB. */
  rssMb: number[];
}

function ringtorch(env: Record<string, string> = {}): Result {
  const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/ddp_mlp.ts"], {
    env: { ...process.env, RINGTORCH_NUM_THREADS: "1", ...env },
  }).toString();
  const line = out.split("\n").find((l) => l.includes("RESULT "));
  if (!line) throw new Error(`bench/ddp: no result from ringtorch:\n${out}`);
  return { ...JSON.parse(line.slice(line.indexOf("RESULT ") + 7)), rssMb: parseRankRss(out) };
}

const peer = findPeer();
console.log(describePeer(peer, 1));

const ptRss: number[] = [];
function torch(mode: "ddp" | "noddp"): number | null {
  if (typeof peer === "string") return null;
  const r = runPeer(peer, [peerScript("ddp.py"), mode], 1);
  if (r.status !== 0) console.log(`PyTorch ${mode} failed: ${r.stderr.trim().split("\n").pop()}`);
  if (mode === "ddp") ptRss.push(...parseRankRss(r.stdout));
  const m = /median=(\d+)/.exec(r.stdout);
  return m ? Number(m[1]) : null;
}

const rt = ringtorch();
const rss = ringtorch({ MODES: "ddp", ROUNDS: "2" }).rssMb;
const ptDdp = torch("ddp");
const ptNo = torch("noddp");
const [ddp, overlap, noddp, barrier, serial] = [rt.runs.ddp, rt.runs.overlap, rt.runs.noddp, rt.runs.barrier, rt.runs.serial].map(median);
const auto = rt.autoOverlaps ? "overlapped" : "reduced after backward";
const vsPt = (v: number) => (ptDdp ? v / ptDdp : NaN);
console.log(`MLP 784-1024-1024-10, Adam, batch 64 per rank, 2 ranks × 1 thread: total samples/s (ringtorch: median of ${rt.runs.ddp.length} turns each)`);
printTable(
  ["configuration", "samples/s", "vs PyTorch DDP", "cost vs no sync"],
  [
    [`ringtorch DDP (auto: ${auto})`, ddp, vsPt(ddp), 1 - ddp / noddp],
    ["ringtorch DDP, overlapped", overlap, vsPt(overlap), 1 - overlap / noddp],
    ["ringtorch, no sync", noddp, vsPt(noddp), ""],
    ["ringtorch, barrier per step", barrier, vsPt(barrier), 1 - barrier / noddp],
    ["ringtorch, all-reduce after backward", serial, vsPt(serial), 1 - serial / noddp],
    ["PyTorch DDP (gloo)", ptDdp ?? NaN, 1, ptDdp && ptNo ? 1 - ptDdp / ptNo : NaN],
    ["PyTorch, no sync", ptNo ?? NaN, ptDdp && ptNo ? ptNo / ptDdp : NaN, ""],
  ],
);
console.log(`DDP's own cost above the barrier floor: ${(100 * (1 - ddp / barrier)).toFixed(1)}%`);
printTable(
  ["peak RSS, DDP alone (MB)", "ringtorch", "PyTorch DDP (gloo)", "ringtorch / PyTorch"],
  rss.map((mb, rank) => [`rank ${rank}`, mb, ptRss[rank] ?? NaN, mb / (ptRss[rank] ?? NaN)]),
);
console.log("targets: ringtorch DDP ≥ 1.5× PyTorch DDP; DDP cost vs no sync ≤ 10% (PyTorch's is about 33% here)");
if (ptDdp === null) console.log(`PyTorch DDP not measured: ${typeof peer === "string" ? peer : "see above"}`);
