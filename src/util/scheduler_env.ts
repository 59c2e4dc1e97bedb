/**
 * Who this process is when a cluster engine started it directly, without ringrun: `srun -n N node
 * train.ts` (Slurm) or `mpirun -np N node train.ts` (Open MPI, or an MPICH-style launcher that
 * sets PMI_RANK/PMI_SIZE). initProcessGroup reads this only when RANK and WORLD_SIZE are absent,
 * and publishes what it derived under the torchrun names, so that everything reading those
 * (samplers, tracking, thread counts) agrees. It lives in util because the cpu backend's thread
 * count needs the local task count before any process group exists.
 *
 * | engine | rank | world size | local rank, local size | store address | store port |
 * | --- | --- | --- | --- | --- | --- |
 * | Slurm (inside `srun`) | SLURM_PROCID | SLURM_STEP_NUM_TASKS or SLURM_NTASKS | SLURM_LOCALID, from SLURM_STEP_TASKS_PER_NODE | first host of SLURM_STEP_NODELIST (or the job's) | 15000 + SLURM_JOB_ID mod 10000 |
 * | Open MPI | OMPI_COMM_WORLD_RANK | OMPI_COMM_WORLD_SIZE | OMPI_COMM_WORLD_LOCAL_RANK, _LOCAL_SIZE | 127.0.0.1 when all ranks are local | 15000 + a hash of the job id mod 10000 |
 * | PMI (MPICH, Intel MPI) | PMI_RANK | PMI_SIZE | MPI_LOCALRANKID, MPI_LOCALNRANKS | as Open MPI | as Open MPI |
 *
 * MASTER_ADDR and MASTER_PORT, when set, win over the derived address and port.
 */
export interface SchedulerWorld {
  /** Named in messages, so a user sees where a value came from. */
  readonly source: "Slurm" | "Open MPI" | "PMI";
  readonly rank: number;
  readonly worldSize: number;
  readonly localRank: number;
  /** Undefined where the engine does not say. */
  readonly localWorldSize: number | undefined;
  /** Undefined when the ranks span hosts and the engine names no first host (MPI): MASTER_ADDR must be set. */
  readonly masterAddr: string | undefined;
  readonly masterPort: number;
  /** The engine's job id (and step), for RINGTORCH_RUN_ID and the store's key prefix. */
  readonly jobId: string;
}

const PORT_BASE = 15000;
const PORT_SPAN = 10000;

export function schedulerWorld(env: NodeJS.ProcessEnv = process.env): SchedulerWorld | undefined {
  // MPI first: `mpirun` inside a Slurm allocation inherits the batch step's SLURM_* variables,
  // which describe the batch script, not the MPI ranks.
  if (env.OMPI_COMM_WORLD_SIZE !== undefined) return mpiWorld(env, "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
  if (env.PMI_SIZE !== undefined && env.PMI_RANK !== undefined) return mpiWorld(env, "PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  // Only a task of a job step: a batch script itself also has SLURM_PROCID=0 and SLURM_NTASKS,
  // but `node train.ts` run there is one process, not rank 0 of N.
  const step = env.SLURM_STEP_ID ?? env.SLURM_STEPID;
  if (env.SLURM_PROCID !== undefined && step !== undefined && step !== "batch" && env.SLURM_JOB_ID !== undefined) return slurmWorld(env, step);
  return undefined;
}

function slurmWorld(env: NodeJS.ProcessEnv, step: string): SchedulerWorld {
  const rank = int(env, "SLURM_PROCID");
  const worldName = env.SLURM_STEP_NUM_TASKS !== undefined ? "SLURM_STEP_NUM_TASKS" : env.SLURM_NTASKS !== undefined ? "SLURM_NTASKS" : "SLURM_NPROCS";
  const worldSize = int(env, worldName);
  checkRank("Slurm", rank, worldSize, `SLURM_PROCID=${rank}`, `${worldName}=${worldSize}`);
  const nodelist = env.SLURM_STEP_NODELIST ?? env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST;
  if (nodelist === undefined || nodelist.trim() === "") throw new Error("Slurm: SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST) is not set, so the first node (the store's host) is unknown; set MASTER_ADDR");
  const jobId = int(env, "SLURM_JOB_ID");
  const perNode = env.SLURM_STEP_TASKS_PER_NODE ?? env.SLURM_TASKS_PER_NODE;
  const nodeId = env.SLURM_NODEID === undefined ? undefined : int(env, "SLURM_NODEID");
  return {
    source: "Slurm",
    rank,
    worldSize,
    localRank: env.SLURM_LOCALID === undefined ? 0 : int(env, "SLURM_LOCALID"),
    localWorldSize: perNode === undefined || nodeId === undefined ? undefined : tasksOnNode(perNode, nodeId),
    masterAddr: firstSlurmHost(nodelist),
    masterPort: slurmStorePort(jobId),
    jobId: `${jobId}.${step}`,
  };
}

/** Where rank 0 (or node 0's ringrun) of Slurm job `jobId` hosts the store, unless MASTER_PORT says. */
export function slurmStorePort(jobId: number): number {
  return PORT_BASE + (jobId % PORT_SPAN);
}

function mpiWorld(env: NodeJS.ProcessEnv, source: "Open MPI" | "PMI", rankName: string, sizeName: string, localName: string, localSizeName: string): SchedulerWorld {
  const rank = int(env, rankName);
  const worldSize = int(env, sizeName);
  checkRank(source, rank, worldSize, `${rankName}=${rank}`, `${sizeName}=${worldSize}`);
  const localWorldSize = env[localSizeName] === undefined ? undefined : int(env, localSizeName);
  const jobId = mpiJobId(env);
  return {
    source,
    rank,
    worldSize,
    localRank: env[localName] === undefined ? rank : int(env, localName),
    localWorldSize,
    // All ranks on this host: rank 0 is here too. Otherwise no variable names rank 0's host.
    masterAddr: localWorldSize === worldSize ? "127.0.0.1" : undefined,
    masterPort: PORT_BASE + (hash(jobId) % PORT_SPAN),
    jobId,
  };
}

/** A string every rank of one mpirun sees alike and the next mpirun does not. */
function mpiJobId(env: NodeJS.ProcessEnv): string {
  for (const name of ["PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMI_ID_JOBID", "PMI_KVSNAME", "PMI_PORT", "PMI_FD"]) {
    const v = env[name];
    if (v !== undefined && v !== "") return v;
  }
  // One job at a time per host keeps working; several need MASTER_PORT.
  return "mpi";
}

/**
 * The first host of a Slurm node list: "gpu[07-09,12],cpu1" → "gpu07", "rack[1-2]-n[3,5]" → "rack1-n3".
 * Commas inside brackets separate ranges, outside them hosts.
 */
export function firstSlurmHost(nodelist: string): string {
  let depth = 0;
  let end = nodelist.length;
  for (let i = 0; i < nodelist.length; i++) {
    const c = nodelist[i];
    if (c === "[") depth++;
    else if (c === "]") depth--;
    else if (c === "," && depth === 0) {
      end = i;
      break;
    }
  }
  if (depth !== 0) throw new Error(`Slurm node list ${JSON.stringify(nodelist)} has unbalanced brackets`);
  return nodelist
    .slice(0, end)
    .trim()
    .replace(/\[([^\]]*)\]/g, (_, ranges: string) => ranges.split(",")[0]!.split("-")[0]!.trim());
}

/** This node's count from Slurm's run-length form: "2(x3),1" is 2, 2, 2, 1 tasks on nodes 0..3. */
export function tasksOnNode(perNode: string, nodeId: number): number | undefined {
  let node = 0;
  for (const part of perNode.split(",")) {
    const m = /^\s*(\d+)(?:\(x(\d+)\))?\s*$/.exec(part);
    if (m === null) return undefined;
    node += Number(m[2] ?? 1);
    if (nodeId < node) return Number(m[1]);
  }
  return undefined;
}

/** Tasks of this job step (or MPI job) on this host, or undefined outside one. */
export function schedulerLocalSize(env: NodeJS.ProcessEnv = process.env): number | undefined {
  try {
    return schedulerWorld(env)?.localWorldSize;
  } catch {
    return undefined;
  }
}

function checkRank(source: string, rank: number, worldSize: number, rankText: string, sizeText: string): void {
  if (worldSize < 1 || rank >= worldSize) throw new Error(`${source}: ${rankText} is not a rank of a job of ${sizeText}`);
}

function int(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name] ?? "";
  if (!/^\s*\d+\s*$/.test(raw)) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(env[name])}`);
  return Number(raw);
}

/** FNV-1a: stable across processes and Node versions. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
