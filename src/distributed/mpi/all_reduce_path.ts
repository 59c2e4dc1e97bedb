import { hostLayout, type HostLayout } from "./hosts.js";
import { startLocalShm, type LocalShm, type MpiAllReduceMode } from "./local_shm.js";
import type { MpiClient } from "./mpi_client.js";

/** Where the mpi backend's world all-reduce runs, when not on MPI_Allreduce alone. */
export interface AllReducePath {
  /** ringtorch's shared memory among this host's ranks (all ranks, on one host). */
  local: LocalShm;
  layout: HostLayout;
  /** The hierarchical path's MPI group of the ranks with this rank's local index; null on one host. */
  crossGroup: number | null;
  /** The first group id left for newGroup. */
  nextGroupId: number;
}

/**
 * Chooses by RINGTORCH_MPI_ALLREDUCE (mpi/local_shm.ts) and by how the ranks sit on hosts (the same
 * decision on every rank, from one exchange): one host → shared memory; several hosts with equal
 * counts of 2 or more → hierarchical (mpi/hier_client.ts); otherwise null: MPI_Allreduce on the
 * world. Hosts with unequal counts take that fallback, which is always correct; a hierarchical
 * all-reduce would leave some ranks with no peer at their local index.
 */
export async function mpiAllReducePath(mpi: MpiClient, mode: MpiAllReduceMode, timeoutMs: number, gen: number): Promise<AllReducePath | null> {
  if (mode === "mpi" || mpi.size < 2) return null;
  const layout = hostLayout(mpi, timeoutMs);
  const hosts = layout.members.length;
  if (hosts === 1) {
    if (mode === "hier") throw new Error("initProcessGroup: RINGTORCH_MPI_ALLREDUCE=hier needs ranks on several hosts, but every rank is on one; leave it unset (shared memory on one host)");
    const local = await startLocalShm(mpi, layout, mode === "shm" ? "shm" : null, timeoutMs, gen);
    return local && { local, layout, crossGroup: null, nextGroupId: 1 };
  }
  if (mode === "shm") {
    const names = [...new Set(mpi.job.hosts)];
    throw new Error(`initProcessGroup: RINGTORCH_MPI_ALLREDUCE=shm needs every rank on one host, but this job spans ${hosts} (${names.join(", ")}); leave it unset to all-reduce across hosts`);
  }
  if (!layout.equalCounts) {
    if (mode === "hier" && mpi.rank === 0 && process.env.RINGTORCH_QUIET !== "1") {
      const counts = layout.members.map((m) => m.length).join(", ");
      console.warn(`ringtorch: the mpi backend all-reduces on MPI_Allreduce across all ranks: the hierarchical all-reduce needs equally many ranks on every host, but the hosts run ${counts}`);
    }
    return null;
  }
  // One rank per host: the hierarchical all-reduce would be MPI's alone.
  if (layout.localSize === 1) return null;
  const local = await startLocalShm(mpi, layout, mode === "hier" ? "hier" : null, timeoutMs, gen);
  if (!local) return null;
  // One communicator per local index, every rank taking part in each split (MPI_Comm_split is collective).
  const L = layout.localSize;
  for (let k = 0; k < L; k++) mpi.addGroup(1 + k, layout.members.map((m) => m[k]!).sort((a, b) => a - b), timeoutMs);
  return { local, layout, crossGroup: 1 + layout.localRank, nextGroupId: 1 + L };
}
