// node --import tsx bench/fsdp_offload.ts [--blocks 24] [--dim 512] [--steps 3] [--dir .bench-offload] [--no-pageout]
// FSDP offload to memory-mapped files (ZeRO-Infinity's idea, with the kernel as the pager): an MLP
// of `blocks` blocks of 8·dim² parameters (2.1M; 50M in all by default) on 2 ranks under FULL_SHARD with AdamW, each rank's
// parameter shards, gradient shards and Adam state (16 bytes a parameter, 16Ψ/2 per rank) in RAM,
// then in a file of --dir (on a disk), then there with pageOut (dropped pages also leave the page
// cache). Each in its own ringrun job (bench/workers/fsdp_offload.ts). Prints per rank the peak
// RSS over the training steps beside the bytes of state it trains, and the step time.
// PyTorch has no peer here: its CPUOffload moves GPU memory to host memory, and needs a GPU.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { median, printTable } from "./table.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const BLOCKS = arg("blocks", "24");
const DIM = arg("dim", "512");
const STEPS = arg("steps", "3");
const DIR = arg("dir", ".bench-offload");

interface RankResult {
  offload: string;
  rank: number;
  msPerStep: number[];
  peakRssMb: number;
  stateMb: number;
  fileMb: number;
  pageCacheMb: number;
  arenaPeakMb: number;
  losses: number[];
}

function run(offload: string): RankResult[] {
  const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/fsdp_offload.ts"], {
    env: { ...process.env, RINGTORCH_NUM_THREADS: "1", OFFLOAD: offload, DIR, BLOCKS, DIM, STEPS },
    maxBuffer: 1 << 26,
  }).toString();
  const results = out
    .split("\n")
    .filter((l) => l.includes("RESULT "))
    .map((l) => JSON.parse(l.slice(l.indexOf("RESULT ") + 7)) as RankResult)
    .sort((a, b) => a.rank - b.rank);
  if (results.length !== 2) throw new Error(`bench/fsdp_offload: expected 2 results with offload ${offload}:\n${out}`);
  return results;
}

const modes = ["none", "rss", ...(process.argv.includes("--no-pageout") ? [] : ["pageout"])];
const runs = modes.map((m) => [m, run(m)] as const);
rmSync(DIR, { recursive: true, force: true });
const base = median(runs[0][1][0].msPerStep);
const names: Record<string, string> = { none: "in memory", rss: "offload (pages leave the process)", pageout: "offload, pageOut (and the page cache)" };
console.log(`MLP ${BLOCKS} blocks × ${((8 * Number(DIM) ** 2) / 1e6).toFixed(1)}M parameters, FULL_SHARD, AdamW, 2 ranks × 1 thread; state = parameter shards + gradient shards + Adam moments per rank`);
printTable(
  ["configuration", "state/rank (MB)", "file/rank (MB)", "peak RSS rank 0 (MB)", "rank 1 (MB)", "RSS / state", "in page cache (MB)", "ms/step", "vs in memory"],
  runs.map(([m, r]) => [names[m], r[0].stateMb, r[0].fileMb, r[0].peakRssMb, r[1].peakRssMb, Math.max(r[0].peakRssMb, r[1].peakRssMb) / r[0].stateMb, r[0].pageCacheMb, median(r[0].msPerStep), median(r[0].msPerStep) / base]),
);
const same = runs.every(([, r]) => r[0].losses.join() === runs[0][1][0].losses.join());
console.log(`losses ${same ? "identical" : "DIFFER"} across configurations: ${runs[0][1][0].losses.map((l) => l.toPrecision(6)).join(", ")}`);
console.log("peak RSS: the kernel's high-water mark over the training steps (after the first), including Node and V8 (~60 MB)");
