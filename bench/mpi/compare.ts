// node --import tsx bench/mpi/compare.ts          (from the repository root; needs mpirun and the MPI addon)
//
// ringtorch's backend "mpi" with its all-reduce on MPI (RINGTORCH_MPI_ALLREDUCE=mpi; by default a
// job on one host all-reduces on ringtorch's shared memory, which bench/allreduce.ts shows)
// against MPI_Allreduce in C, alternated BENCH_REPEAT times (3 unless set) so that both see the
// same machine, at BENCH_SIZES_MB (16 unless set, e.g. 1,16,64), on 2 ranks; BENCH_MPIRUN_ARGS passes Open MPI tuning to both, e.g.
//   BENCH_MPIRUN_ARGS="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4" node --import tsx bench/mpi/compare.ts
// Prints each pair's median times and algbw, and the ratio ringtorch / C.
import { fileURLToPath } from "node:url";
import { runMpi, runRingtorchMpi, type Row } from "./runs.js";

const sizes = (process.env.BENCH_SIZES_MB ?? "16").split(",").map(Number);
process.env.BENCH_SIZES_MB = sizes.join(",");
const repeat = Number(process.env.BENCH_REPEAT ?? "3");
const rankScript = fileURLToPath(new URL("../allreduce.ts", import.meta.url));
const gbps = (mb: number, ms: number) => (mb * 2 ** 20) / (ms / 1000) / 1e9;
const ratios = new Map<number, number[]>(sizes.map((mb) => [mb, []]));

console.log(`all-reduce, float32, 2 ranks; mpirun options: ${process.env.BENCH_MPIRUN_ARGS || "(none)"}`);
console.log("round | size  | rt-mpi ms | rt-mpi algbw | C MPI ms | C MPI algbw | rt-mpi/C");
for (let k = 0; k < repeat; k++) {
  const rt = runRingtorchMpi(rankScript, "mpi");
  // Both under --bind-to none, so that the ratio is the backend's overhead and not the binding's.
  const c = runMpi(sizes, true);
  if (typeof rt === "string" || typeof c === "string") {
    console.log(`note: ${typeof rt === "string" ? rt : c}`);
    process.exit(1);
  }
  for (const mb of sizes) {
    const a = rt.find((r) => r.mb === mb) as Row;
    const b = c.find((r) => r.mb === mb) as Row;
    const ratio = gbps(mb, a.medianMs) / gbps(mb, b.medianMs);
    ratios.get(mb)!.push(ratio);
    console.log(`${String(k + 1).padStart(5)} | ${`${mb} MB`.padEnd(5)} | ${a.medianMs.toFixed(2).padStart(9)} | ${gbps(mb, a.medianMs).toFixed(2).padStart(12)} | ${b.medianMs.toFixed(2).padStart(8)} | ${gbps(mb, b.medianMs).toFixed(2).padStart(11)} | ${ratio.toFixed(2).padStart(7)}x`);
  }
}
for (const [mb, r] of ratios) {
  const sorted = [...r].sort((x, y) => x - y);
  console.log(`${mb} MB: median rt-mpi/C ${sorted[sorted.length >> 1]!.toFixed(2)}x over ${r.length} alternations`);
}
