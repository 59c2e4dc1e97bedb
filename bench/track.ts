// node --import tsx bench/track.ts
// Tracking overhead: the DDP MLP of bench/ddp.ts on 2 ranks, in turns without and with logging 10
// scalars per step to a run (JSONL + TensorBoard events + system sampler) (bench/workers/track_ddp.ts),
// and the bare cost of one log call of 10 scalars beside PyTorch's SummaryWriter doing the same
// (bench/torch/track_log.py, run with ~/.venvs/peer/bin/python where tensorboard is installed).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { median, printTable } from "./table.js";

const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "bench/workers/track_ddp.ts"], {
  env: { ...process.env, RINGTORCH_NUM_THREADS: "1" },
}).toString();
const line = out.split("\n").find((l) => l.includes("RESULT "));
if (!line) throw new Error(`bench/track: no result from ringtorch:\n${out}`);
const rt = JSON.parse(line.slice(line.indexOf("RESULT ") + 7)) as { ms: { plain: number[]; logged: number[] }; log10Us: number };

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
console.log(`DDP MLP 784-1024-1024-10, batch 64 per rank, 2 ranks × 1 thread; median of ${rt.ms.plain.length} turns of each`);
printTable(
  ["configuration", "ms/step", "overhead"],
  [
    ["ringtorch DDP, no logging", plain, ""],
    ["ringtorch DDP, 10 scalars logged per step", logged, `${(100 * (logged / plain - 1)).toFixed(1)}%`],
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
console.log("target: logging 10 scalars per step costs ≤ 3% of the DDP MLP's step time");
