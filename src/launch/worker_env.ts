/**
 * The environment contract between ringrun and each worker process. A worker inherits ringrun's
 * own environment plus:
 *
 * | variable                     | meaning                                                          |
 * | ---------------------------- | ---------------------------------------------------------------- |
 * | RANK                         | global rank, 0 .. WORLD_SIZE-1, node by node in node-rank order  |
 * | LOCAL_RANK                   | rank on this node, 0 .. LOCAL_WORLD_SIZE-1                       |
 * | GROUP_RANK                   | this node's rank (torchrun: the agent's group rank)              |
 * | ROLE_RANK, ROLE_WORLD_SIZE   | rank and size within the role (one role per job: = RANK, WORLD_SIZE) |
 * | WORLD_SIZE                   | number of workers on all nodes                                   |
 * | LOCAL_WORLD_SIZE             | number of workers on this node                                   |
 * | GROUP_WORLD_SIZE             | number of nodes in this attempt                                  |
 * | ROLE_NAME                    | --role (default "default")                                       |
 * | MASTER_ADDR, MASTER_PORT     | the job's TCP store, hosted by ringrun (node 0's, or the c10d endpoint's) |
 * | RINGTORCH_USE_AGENT_STORE=1  | connect to that store as a client; no rank hosts its own         |
 * | RINGTORCH_STORE_TOKEN        | the secret the store demands of every client                     |
 * | RINGTORCH_STORE_PREFIX       | key prefix unique to this attempt ("/worker/attempt_<n>/"): keys a failed attempt left behind never leak into the next |
 * | RINGTORCH_RESTART_COUNT      | restarts so far (0 on the first attempt)                         |
 * | RINGTORCH_MAX_RESTARTS       | --max-restarts                                                   |
 * | RINGTORCH_RUN_ID             | --rdzv-id (Slurm job id, or a fresh uuid for --standalone)       |
 * | RINGTORCH_ERROR_FILE         | where this worker's uncaught error is written as JSON            |
 * | TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID, TORCHELASTIC_ERROR_FILE | the same values under torchrun's names |
 * | RINGTORCH_NUM_THREADS=1, OMP_NUM_THREADS=1 | only when several workers share the node, each unless the user set it (RINGTORCH_NUM_THREADS follows a user's OMP_NUM_THREADS): one compute thread per rank instead of every rank claiming every core |
 * | RINGTORCH_AGENT_PID          | ringrun's pid; with RINGTORCH_LIFELINE_FD (the fd of a pipe from ringrun) the preload exits the worker, and its process group, when ringrun is gone, even if it went before the preload ran (lifeline.ts) |
 *
 * Without RANK in its environment the same script is expected to run as a single process.
 */
export interface WorkerIdentity {
  readonly rank: number;
  readonly localRank: number;
  readonly groupRank: number;
  readonly worldSize: number;
  readonly localWorldSize: number;
  readonly groupWorldSize: number;
  readonly role: string;
  readonly masterAddr: string;
  readonly masterPort: number;
  readonly storeToken: string;
  readonly attempt: number;
  readonly restartCount: number;
  readonly maxRestarts: number;
  readonly runId: string;
  readonly errorFile: string;
}

/** File descriptor of the lifeline pipe in each worker (stdio slot 3). */
export const LIFELINE_FD = 3;

export function workerEnvironment(base: NodeJS.ProcessEnv, id: WorkerIdentity): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    RANK: String(id.rank),
    LOCAL_RANK: String(id.localRank),
    GROUP_RANK: String(id.groupRank),
    ROLE_RANK: String(id.rank),
    WORLD_SIZE: String(id.worldSize),
    LOCAL_WORLD_SIZE: String(id.localWorldSize),
    ROLE_WORLD_SIZE: String(id.worldSize),
    GROUP_WORLD_SIZE: String(id.groupWorldSize),
    ROLE_NAME: id.role,
    MASTER_ADDR: id.masterAddr,
    MASTER_PORT: String(id.masterPort),
    RINGTORCH_USE_AGENT_STORE: "1",
    RINGTORCH_STORE_TOKEN: id.storeToken,
    RINGTORCH_STORE_PREFIX: `/worker/attempt_${id.attempt}/`,
    RINGTORCH_RESTART_COUNT: String(id.restartCount),
    RINGTORCH_MAX_RESTARTS: String(id.maxRestarts),
    RINGTORCH_RUN_ID: id.runId,
    RINGTORCH_ERROR_FILE: id.errorFile,
    TORCHELASTIC_RESTART_COUNT: String(id.restartCount),
    TORCHELASTIC_MAX_RESTARTS: String(id.maxRestarts),
    TORCHELASTIC_RUN_ID: id.runId,
    TORCHELASTIC_ERROR_FILE: id.errorFile,
    TORCHELASTIC_USE_AGENT_STORE: "True",
    RINGTORCH_AGENT_PID: String(process.pid),
    RINGTORCH_LIFELINE_FD: String(LIFELINE_FD),
  };
  if (id.localWorldSize > 1) {
    // A user who set only OMP_NUM_THREADS meant it for ringtorch's kernels too.
    env.RINGTORCH_NUM_THREADS ??= env.OMP_NUM_THREADS ?? "1";
    env.OMP_NUM_THREADS ??= "1";
  }
  return env;
}
