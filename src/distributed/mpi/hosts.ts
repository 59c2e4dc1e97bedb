import type { MpiClient } from "./mpi_client.js";

/** How the ranks of an mpi job sit on hosts: the same on every rank. */
export interface HostLayout {
  /** Each host's ranks, ascending; hosts in the order of their lowest rank. */
  members: number[][];
  /** This rank's host (an index into members), its place there, and how many ranks share it. */
  host: number;
  localRank: number;
  localSize: number;
  /** Whether every host runs the same number of ranks (the hierarchical all-reduce needs it). */
  equalCounts: boolean;
}

/**
 * RINGTORCH_MPI_TEST_HOSTS, for tests only: "2,2" makes ranks 0–1 believe they are on one host and
 * 2–3 on another (blocks of consecutive ranks, one count per fake host, summing to the job's
 * size), so that the hierarchical all-reduce can be tested on one machine. It changes only the
 * grouping: every fake host's ranks still share memory, and MPI still sees one machine.
 * Returns this rank's fake host, or -1 when the variable is unset.
 */
export function testHostOf(rank: number, size: number, env: NodeJS.ProcessEnv = process.env): number {
  const v = env.RINGTORCH_MPI_TEST_HOSTS;
  if (v === undefined || v === "") return -1;
  const counts = v.split(",").map((s) => Number(s.trim()));
  const total = counts.reduce((a, b) => a + b, 0);
  if (counts.some((c) => !Number.isInteger(c) || c < 1) || total !== size) {
    throw new Error(`RINGTORCH_MPI_TEST_HOSTS must list how many consecutive ranks each fake host runs, adding up to the job's ${size} ranks (e.g. "2,2"), got ${JSON.stringify(v)}`);
  }
  let end = 0;
  for (const [h, c] of counts.entries()) {
    end += c;
    if (rank < end) return h;
  }
  return counts.length - 1;
}

/**
 * Groups the job's ranks by host: by MPI_Get_processor_name, or by RINGTORCH_MPI_TEST_HOSTS. Each
 * rank reads the variable itself, so the fake hosts are exchanged over MPI (blocking, setup only):
 * every rank then decides from the same list, even if one rank's environment differs.
 */
export function hostLayout(mpi: MpiClient, timeoutMs: number): HostLayout {
  let mine = -1;
  let bad: string | null = null;
  try {
    mine = testHostOf(mpi.rank, mpi.size);
  } catch (err) {
    bad = (err as Error).message;
    mine = -2;
  }
  const fake = mpi.allGatherInts(mine, timeoutMs);
  if (fake.includes(-2)) throw new Error(`initProcessGroup: ${bad ?? `RINGTORCH_MPI_TEST_HOSTS is not valid on rank(s) ${[...fake.keys()].filter((r) => fake[r] === -2).join(", ")}`}`);
  const set = fake.filter((h) => h >= 0).length;
  if (set !== 0 && set !== mpi.size) {
    throw new Error(`initProcessGroup: RINGTORCH_MPI_TEST_HOSTS is set on ${set} of ${mpi.size} ranks; set it on every rank (mpirun -x RINGTORCH_MPI_TEST_HOSTS) or on none`);
  }
  const keys: (string | number)[] = set === 0 ? mpi.job.hosts : fake;
  const order: (string | number)[] = [];
  const members: number[][] = [];
  keys.forEach((k, r) => {
    let h = order.indexOf(k);
    if (h < 0) {
      h = order.push(k) - 1;
      members.push([]);
    }
    members[h]!.push(r);
  });
  const host = order.indexOf(keys[mpi.rank]!);
  const here = members[host]!;
  return { members, host, localRank: here.indexOf(mpi.rank), localSize: here.length, equalCounts: members.every((m) => m.length === here.length) };
}
