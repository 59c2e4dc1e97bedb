import { availableParallelism, cpus } from "node:os";

/**
 * A warning when mpirun bound this rank to one CPU of several (Open MPI's default for 2 ranks is
 * `--bind-to core`), else null. A ringtorch rank has several busy threads (the main thread, the
 * comm worker that overlaps DDP's all-reduces with backward, MPI's thread, GEMM threads): bound to
 * one core they take turns on it. On a loaded 2-core machine the mpi backend's all-reduce measured
 * 0.4–0.6× of the same run under `--bind-to none` at 1–16 MB.
 */
export function singleCpuBindingWarning(rank: number, available = availableParallelism(), total = cpus().length): string | null {
  if (available !== 1 || total <= 1) return null;
  return (
    `ringtorch: rank ${rank} may run on 1 of this host's ${total} CPUs (mpirun binds each rank to a core by default when there are 2); ` +
    "its compute and communication threads then share that core. Run `mpirun --bind-to none …` (or give each rank several cores, e.g. `--map-by slot:PE=4`)."
  );
}
