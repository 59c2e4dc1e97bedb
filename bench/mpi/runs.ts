// The two MPI rows of bench/allreduce.ts and bench/mpi/compare.ts: ringtorch's backend "mpi" and
// Open MPI's MPI_Allreduce in C (allreduce.c), each under its own mpirun. BENCH_MPIRUN_ARGS adds
// options to both mpiruns (Open MPI tuning, e.g. "--mca btl_vader_single_copy_mechanism none").
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Row {
  mb: number;
  medianMs: number;
  minMs: number;
}

const WORLD = 2;

/**
 * `unbound`: ringtorch's ranks run under `--bind-to none` (before BENCH_MPIRUN_ARGS, which may
 * override it). Open MPI binds each rank to one core when there are 2, and a Node rank has several
 * busy threads (main, comm worker, MPI's): bound, they share that core; on a loaded 2-core machine
 * that measured 0.4–0.6× of unbound at 1–16 MB. The C program has one thread and keeps MPI's default.
 */
function mpirunArgs(unbound = false, world = WORLD): string[] {
  const asRoot = process.getuid?.() === 0 ? ["--allow-run-as-root"] : [];
  // More ranks than this machine has cores (bench/mpi/hier.ts's 4 on 2) need --oversubscribe.
  return [...asRoot, "--oversubscribe", ...(unbound ? ["--bind-to", "none"] : []), ...(process.env.BENCH_MPIRUN_ARGS ?? "").split(/\s+/).filter(Boolean), "-np", String(world)];
}

/** Parses the peers' common "allreduce NMB: time ms min=… median=…" lines. */
export function peerRows(stdout: string): Map<number, Row> {
  const rows = new Map<number, Row>();
  for (const m of stdout.matchAll(/allreduce (\d+)MB: time ms min=([\d.]+) median=([\d.]+)/g)) {
    rows.set(Number(m[1]), { mb: Number(m[1]), minMs: Number(m[2]), medianMs: Number(m[3]) });
  }
  return rows;
}

/**
 * ringtorch's own mpi backend (initProcessGroup({ backend: "mpi" })) under mpirun: `rankScript` in
 * BENCH_ROLE=rank. `allReduceOn`: RINGTORCH_MPI_ALLREDUCE, "auto" (on one host, ringtorch's shared
 * memory) or "mpi" (Open MPI's MPI_Allreduce).
 */
export function runRingtorchMpi(rankScript: string, allReduceOn: "auto" | "mpi" | "hier" = "auto", world = WORLD, extraEnv: Record<string, string> = {}): Row[] | string {
  if (spawnSync("sh", ["-c", "command -v mpirun"]).status !== 0) return "ringtorch's mpi backend was not measured: mpirun is not installed";
  if (!existsSync(fileURLToPath(new URL("../../build/Release/ringtorch_mpi.node", import.meta.url)))) {
    return "ringtorch's mpi backend was not measured: its addon is not built (Debian: libopenmpi-dev, then npm run build:native)";
  }
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv, BENCH_ROLE: "rank", BENCH_BACKEND: "mpi", RINGTORCH_MPI_ALLREDUCE: allReduceOn };
  for (const k of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]) delete env[k];
  const r = spawnSync("mpirun", [...mpirunArgs(true, world), ...Object.keys(extraEnv).flatMap((k) => ["-x", k]), process.execPath, "--import", "tsx", rankScript], { encoding: "utf8", env, timeout: 600_000 });
  const line = (r.stdout ?? "").split("\n").find((l) => l.startsWith("ROWS "));
  return line ? (JSON.parse(line.slice(5)) as { rows: Row[] }).rows : `ringtorch's mpi backend run failed: ${(r.stderr ?? "").slice(-500)}`;
}

/** MPI_Allreduce in C at `sizesMb` (bench/mpi/allreduce.c, built here with mpicc); `unbound` as in mpirunArgs. */
export function runMpi(sizesMb = [1, 16, 64], unbound = false, world = WORLD): Row[] | string {
  const missing = ["mpicc", "mpirun"].filter((c) => spawnSync("sh", ["-c", `command -v ${c}`]).status !== 0);
  if (missing.length > 0) return `Open MPI was not measured: ${missing.join(" and ")} not installed (Debian: libopenmpi-dev openmpi-bin)`;
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-mpi-bench-"));
  try {
    const exe = join(dir, "allreduce");
    const built = spawnSync("mpicc", ["-O2", "-o", exe, fileURLToPath(new URL("./allreduce.c", import.meta.url))], { encoding: "utf8" });
    if (built.status !== 0) return `Open MPI was not measured: mpicc failed: ${built.stderr.slice(-300)}`;
    const r = spawnSync("mpirun", [...mpirunArgs(unbound, world), exe, ...sizesMb.map(String)], { encoding: "utf8", timeout: 600_000 });
    const rows = [...peerRows(r.stdout ?? "").values()];
    return rows.length > 0 ? rows : `Open MPI run failed: ${(r.stderr ?? "").slice(-500)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
