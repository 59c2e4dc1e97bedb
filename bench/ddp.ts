// node --import tsx bench/ddp.ts
// DDP throughput: the MLP 784-1024-1024-10 with Adam, batch 64 per rank, on 2 ranks of one thread
// each, with DistributedDataParallel and without any synchronisation, beside PyTorch 1.13's DDP
// over gloo (../shared/peers/torch/ddp.py) measured in the same run. Total samples/s; higher is better.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { median, printTable } from "./table.js";

function ringtorch(mode: "ddp" | "noddp"): { runs: number[]; rssMb: number } {
  const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/ddp_mlp.ts", mode], {
    env: { ...process.env, RINGTORCH_NUM_THREADS: "1" },
  }).toString();
  const line = out.split("\n").find((l) => l.includes("RESULT "));
  if (!line) throw new Error(`bench/ddp: no result from the ${mode} run:\n${out}`);
  return JSON.parse(line.slice(line.indexOf("RESULT ") + 7));
}

function torch(mode: "ddp" | "noddp"): number | null {
  if (!existsSync("/usr/lib/python3/dist-packages/torch")) return null;
  const out = execFileSync("/usr/bin/python3", ["../shared/peers/torch/ddp.py", mode], { env: { ...process.env, OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1" } }).toString();
  const m = /median=(\d+)/.exec(out);
  return m ? Number(m[1]) : null;
}

const rtDdp = ringtorch("ddp");
const rtNo = ringtorch("noddp");
const ptDdp = torch("ddp");
const ptNo = torch("noddp");
const a = median(rtDdp.runs);
const b = median(rtNo.runs);
console.log("MLP 784-1024-1024-10, Adam, batch 64 per rank, 2 ranks × 1 thread: total samples/s (median of 5 runs of 200 steps)");
printTable(
  ["configuration", "samples/s", "vs PyTorch DDP", "DDP overhead", "peak RSS/rank (MB)"],
  [
    ["ringtorch DDP", a, ptDdp ? a / ptDdp : NaN, 1 - a / b, rtDdp.rssMb],
    ["ringtorch, no sync", b, ptDdp ? b / ptDdp : NaN, "", rtNo.rssMb],
    ["PyTorch DDP (gloo)", ptDdp ?? NaN, 1, ptDdp && ptNo ? 1 - ptDdp / ptNo : NaN, ""],
    ["PyTorch, no sync", ptNo ?? NaN, ptDdp && ptNo ? ptNo / ptDdp : NaN, "", ""],
  ],
);
console.log("targets: ringtorch DDP ≥ 1.5× PyTorch DDP; DDP overhead ≤ 10% (PyTorch's is about 33% here)");
if (ptDdp === null) console.log("PyTorch peer missing: apt-get install -y python3-torch");
