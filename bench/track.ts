// node --import tsx bench/track.ts
// Tracking overhead: the DDP MLP of bench/ddp.ts on 2 ranks, in turns without anything, with logging
// 10 scalars per step to a run (JSONL + TensorBoard events + system sampler), and with the timeline
// traced (ringrun --trace) (bench/workers/track_ddp.ts); beside it PyTorch's DDP of the same MLP
// with torch.profiler off and on (bench/torch/trace_ddp.py), and the bare cost of one log call of
// 10 scalars beside PyTorch's SummaryWriter doing the same (bench/torch/track_log.py, run with
// ~/.venvs/peer/bin/python where tensorboard is installed).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { findPeer, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";

const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/track_ddp.ts"], {
  env: { ...process.env, RINGTORCH_NUM_THREADS: "1" },
}).toString();
const line = out.split("\n").find((l) => l.includes("RESULT "));
if (!line) throw new Error(`bench/track: no result from ringtorch:\n${out}`);
const rt = JSON.parse(line.slice(line.indexOf("RESULT ") + 7)) as { ms: { plain: number[]; logged: number[]; traced: number[] }; log10Us: number };

// PyTorch's own timeline, torch.profiler, on the same DDP MLP: step time with it off and on.
let torchProfiler: { off: number; on: number } | null = null;
const peer = findPeer();
if (typeof peer !== "string") {
  const r = runPeer(peer, [peerScript("trace_ddp.py")], 1);
  const m = /RESULT (\{.*\})/.exec(r.stdout);
  if (m) torchProfiler = JSON.parse(m[1]);
  else console.log(`PyTorch profiler peer failed: ${(r.stderr || "").trim().split("\n").pop()}`);
} else console.log(`PyTorch profiler peer missing: ${peer}`);

const python = join(homedir(), ".venvs/peer/bin/python");
let torchUs = NaN;
if (existsSync(python)) {
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-bench-tb-"));
  try {
    const r = JSON.parse(execFileSync(python, ["bench/torch/track_log.py", dir], { env: { ...process.env, OMP_NUM_THREADS: "1" } }).toString().trim().split("\n").at(-1)!);
    torchUs = r.log10_us;
  } catch (err) {
    console.log(`PyTorch peer failed: ${(err as Error).message.split("\n")[0]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else console.log(`PyTorch peer missing: ${python} (a venv with torch and tensorboard)`);

const plain = median(rt.ms.plain);
const logged = median(rt.ms.logged);
const traced = median(rt.ms.traced);
console.log(`DDP MLP 784-1024-1024-10, batch 64 per rank, 2 ranks × 1 thread; median of ${rt.ms.plain.length} turns of each`);
printTable(
  ["configuration", "ms/step", "overhead"],
  [
    ["ringtorch DDP, no logging", plain, ""],
    ["ringtorch DDP, 10 scalars logged per step", logged, `${(100 * (logged / plain - 1)).toFixed(1)}%`],
    ["ringtorch DDP, timeline traced (--trace)", traced, `${(100 * (traced / plain - 1)).toFixed(1)}% (ratio ${(traced / plain).toFixed(3)})`],
    ["PyTorch DDP (gloo), profiler off", torchProfiler?.off ?? NaN, ""],
    ["PyTorch DDP (gloo), torch.profiler on", torchProfiler?.on ?? NaN, torchProfiler ? `${(100 * (torchProfiler.on / torchProfiler.off - 1)).toFixed(1)}% (ratio ${(torchProfiler.on / torchProfiler.off).toFixed(3)})` : ""],
  ],
);
console.log("");
printTable(
  ["one log call of 10 scalars", "µs", "vs SummaryWriter"],
  [
    ["ringtorch run.log (JSONL + TensorBoard event)", rt.log10Us, torchUs / rt.log10Us],
    ["PyTorch SummaryWriter.add_scalar ×10", torchUs, 1],
  ],
);
console.log("targets: logging 10 scalars per step, and tracing the timeline, each cost ≤ 3% of the DDP MLP's step time");
