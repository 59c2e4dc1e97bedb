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
    const nodelist = env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST;
    return {
      source: "Slurm",
      nnodes: intOrUndefined(env.SLURM_NNODES),
      nodeRank: intOrUndefined(env.SLURM_NODEID),
      // A user's own MASTER_ADDR (a common line in sbatch scripts) beats the guess from the list.
      masterAddr: env.MASTER_ADDR ?? (nodelist === undefined ? undefined : firstSlurmHost(nodelist)),
      masterPort: intOrUndefined(env.MASTER_PORT),
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
  return nodelist.slice(0, end).replace(/\[([^\]]*)\]/g, (_, ranges: string) => ranges.split(",")[0]!.split("-")[0]!);
}

function intOrUndefined(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}
