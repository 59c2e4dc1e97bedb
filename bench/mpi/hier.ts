// node --import tsx bench/mpi/hier.ts          (from the repository root; needs mpirun and the MPI addon)
//
// The mpi backend's hierarchical all-reduce (RINGTORCH_MPI_ALLREDUCE=hier) on 4 ranks made to look
// like 2 hosts × 2 (RINGTORCH_MPI_TEST_HOSTS=2,2), beside the same backend's MPI_Allreduce on the
// same 4 ranks (RINGTORCH_MPI_ALLREDUCE=mpi), MPI_Allreduce in C on 4 ranks, and the backend's
// one-host path (all 4 on ringtorch's shared memory), alternated BENCH_REPEAT times (3 unless set)
// at BENCH_SIZES_MB (1,16,64 unless set), all under --bind-to none (BENCH_MPIRUN_ARGS adds options).
//
// What it shows and what it does not: on one machine the "between hosts" step also goes through
// Open MPI's shared memory (vader), not a network, so this measures the path's own cost (two
// shared-memory steps among 2 ranks plus MPI on half of the data per rank) against
// MPI_Allreduce over the same ranks. Across real hosts the inter-host step carries 1/L of the data
// per rank over each rank's own link, which no single machine reproduces.
import { fileURLToPath } from "node:url";
import { runMpi, runRingtorchMpi, type Row } from "./runs.js";

const sizes = (process.env.BENCH_SIZES_MB ?? "1,16,64").split(",").map(Number);
process.env.BENCH_SIZES_MB = sizes.join(",");
const repeat = Number(process.env.BENCH_REPEAT ?? "3");
const world = 4;
const rankScript = fileURLToPath(new URL("../allreduce.ts", import.meta.url));
const gbps = (mb: number, ms: number) => (mb * 2 ** 20) / (ms / 1000) / 1e9;
const variants = {
  hier: () => runRingtorchMpi(rankScript, "hier", world, { RINGTORCH_MPI_TEST_HOSTS: "2,2" }),
  rtMpi: () => runRingtorchMpi(rankScript, "mpi", world),
  cMpi: () => runMpi(sizes, true, world),
  shm: () => runRingtorchMpi(rankScript, "auto", world),
};
type Name = keyof typeof variants;
const times = new Map<string, number[]>();

console.log(`all-reduce, float32, ${world} ranks; mpirun options: --bind-to none ${process.env.BENCH_MPIRUN_ARGS || ""}`);
for (let k = 0; k < repeat; k++) {
  for (const name of Object.keys(variants) as Name[]) {
    const rows = variants[name]();
    if (typeof rows === "string") {
      console.log(`note: ${name}: ${rows}`);
      process.exit(1);
    }
    for (const r of rows as Row[]) times.set(`${name} ${r.mb}`, [...(times.get(`${name} ${r.mb}`) ?? []), r.medianMs]);
  }
}
const median = (name: Name, mb: number) => {
  const t = [...times.get(`${name} ${mb}`)!].sort((a, b) => a - b);
  return t[t.length >> 1]!;
};
console.log(
  "hier: 2 fake hosts × 2, shm reduce-scatter + MPI all-reduce of each local rank's half + shm all-gather; rt-mpi: the backend on MPI_Allreduce; " +
    "C MPI: MPI_Allreduce in C (bench/mpi/allreduce.c); shm: the backend's one-host path (4 ranks on ringtorch's shared memory). " +
    `Medians of ${repeat} alternations, GB/s algbw.`,
);
console.log("size  | hier ms | hier GB/s | rt-mpi GB/s | C MPI GB/s | shm GB/s | hier/rt-mpi | hier/C MPI | hier/shm");
for (const mb of sizes) {
  const [h, r, c, s] = (["hier", "rtMpi", "cMpi", "shm"] as Name[]).map((n) => gbps(mb, median(n, mb)));
  console.log(
    `${`${mb} MB`.padEnd(5)} | ${median("hier", mb).toFixed(2).padStart(7)} | ${h!.toFixed(2).padStart(9)} | ${r!.toFixed(2).padStart(11)} | ${c!.toFixed(2).padStart(10)} | ${s!.toFixed(2).padStart(8)} | ` +
      `${(h! / r!).toFixed(2).padStart(10)}x | ${(h! / c!).toFixed(2).padStart(9)}x | ${(h! / s!).toFixed(2).padStart(7)}x`,
  );
}
