import { firstSlurmHost, slurmStorePort } from "../util/scheduler_env.js";

export { firstSlurmHost };

/**
 * What a cluster scheduler already tells ringrun about the job's nodes. Explicit flags (and
 * PET_* variables) win over everything here; these only fill in what the user left out.
 */

export interface ClusterHints {
  /** Named in messages so a user sees where a value came from. */
  readonly source: "Slurm" | "Kubernetes";
  readonly nnodes?: number;
  readonly nodeRank?: number;
  readonly masterAddr?: string;
  readonly masterPort?: number;
  readonly runId?: string;
}

export function detectCluster(env: NodeJS.ProcessEnv): ClusterHints | undefined {
  // Inside a ringrun worker RANK/WORLD_SIZE describe that worker, not a node: a nested ringrun
  // must not read them as the node layout.
  if (env.RINGTORCH_AGENT_PID !== undefined) return undefined;
  if (env.SLURM_JOB_ID !== undefined && env.SLURM_NNODES !== undefined && env.SLURM_NODEID !== undefined) {
    // Inside `srun` the step's nodes, which may be fewer than the job's; in the batch script the job's.
    const nodelist = env.SLURM_STEP_NODELIST ?? env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST;
    return {
      source: "Slurm",
      nnodes: intOrUndefined(env.SLURM_STEP_NUM_NODES ?? env.SLURM_NNODES),
      nodeRank: intOrUndefined(env.SLURM_NODEID),
      // A user's own MASTER_ADDR (a common line in sbatch scripts) beats the guess from the list.
      masterAddr: env.MASTER_ADDR ?? (nodelist === undefined ? undefined : firstSlurmHost(nodelist)),
      // The same port a rank started by srun alone would use (scheduler_env.ts): two jobs sharing
      // a node do not both ask for 29500.
      masterPort: intOrUndefined(env.MASTER_PORT) ?? mapDefined(intOrUndefined(env.SLURM_JOB_ID), slurmStorePort),
      runId: env.SLURM_JOB_ID,
    };
  }
  if (env.MASTER_ADDR !== undefined && env.WORLD_SIZE !== undefined && env.LOCAL_RANK === undefined) {
    // PyTorchJob sets WORLD_SIZE to the number of pods and RANK to this pod's index when each pod
    // runs one launcher; that is a node count and a node rank to ringrun.
    return {
      source: "Kubernetes",
      nnodes: intOrUndefined(env.WORLD_SIZE),
      nodeRank: intOrUndefined(env.RANK),
      masterAddr: env.MASTER_ADDR,
      masterPort: intOrUndefined(env.MASTER_PORT),
    };
  }
  return undefined;
}

function mapDefined<T, U>(value: T | undefined, f: (v: T) => U): U | undefined {
  return value === undefined ? undefined : f(value);
}

function intOrUndefined(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}
