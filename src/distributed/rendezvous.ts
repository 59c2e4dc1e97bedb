import { schedulerWorld, type SchedulerWorld } from "../util/scheduler_env.js";
import type { InitOptions } from "./init.js";

export interface Rendezvous {
  host: string;
  port: number;
  rank: number;
  worldSize: number;
  /** ringrun hosts the store (RINGTORCH_USE_AGENT_STORE=1); rank 0 must not. */
  agentStore: boolean;
  /** Set when srun or mpirun started this process without ringrun's variables (scheduler_env.ts). */
  scheduler?: SchedulerWorld;
}

/** Where the store is and who this process is, from the init method, the options and the environment. */
export function resolveRendezvous(opts: InitOptions, env: NodeJS.ProcessEnv = process.env): Rendezvous {
  const method = opts.initMethod ?? "env://";
  let host: string;
  let port: number;
  if (method === "env://" && opts.rank === undefined && opts.worldSize === undefined && !env.RANK && !env.WORLD_SIZE) {
    const scheduler = schedulerWorld(env);
    if (scheduler) return fromScheduler(scheduler, env);
  }
  if (method === "env://") {
    const missing = ["MASTER_ADDR", "MASTER_PORT"].filter((k) => !env[k]);
    const worldGiven = opts.worldSize ?? intEnv(env, "WORLD_SIZE");
    if (missing.length > 0 && worldGiven !== undefined && worldGiven > 1) {
      throw new Error(`initProcessGroup(env://): ${missing.join(" and ")} must be set (where rank 0 or ringrun hosts the store)`);
    }
    host = env.MASTER_ADDR ?? "127.0.0.1";
    port = intEnv(env, "MASTER_PORT") ?? 0;
  } else if (method.startsWith("tcp://")) {
    const url = new URL(method);
    host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    port = Number(url.port);
    if (!host || !Number.isInteger(port) || port <= 0) throw new Error(`initProcessGroup: initMethod ${method} must look like tcp://host:port`);
  } else {
    throw new Error(`initProcessGroup: initMethod ${JSON.stringify(method)} is not supported; use "env://" or "tcp://host:port"`);
  }
  const rank = opts.rank ?? intEnv(env, "RANK");
  const worldSize = opts.worldSize ?? intEnv(env, "WORLD_SIZE");
  if (rank === undefined || worldSize === undefined) {
    if (method === "env://" && rank === undefined && worldSize === undefined) {
      return { host, port, rank: 0, worldSize: 1, agentStore: false };
    }
    throw new Error(`initProcessGroup(${method}): pass rank and worldSize, or set RANK and WORLD_SIZE`);
  }
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new Error(`initProcessGroup: worldSize must be a positive integer, got ${worldSize}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) {
    throw new Error(`initProcessGroup: rank must be in 0..${worldSize - 1} for a world of ${worldSize}, got ${rank}`);
  }
  const agentStore = method === "env://" && env.RINGTORCH_USE_AGENT_STORE === "1";
  return { host, port, rank, worldSize, agentStore };
}

function fromScheduler(s: SchedulerWorld, env: NodeJS.ProcessEnv): Rendezvous {
  const host = env.MASTER_ADDR || s.masterAddr;
  if (host === undefined) {
    throw new Error(
      `initProcessGroup: ${s.source} started ${s.worldSize} ranks across hosts (${s.localWorldSize ?? "some"} on this one), and no variable names rank 0's host; ` +
        `set MASTER_ADDR to it on every rank (e.g. \`mpirun -x MASTER_ADDR=$(hostname) ...\`)`,
    );
  }
  return { host, port: intEnv(env, "MASTER_PORT") ?? s.masterPort, rank: s.rank, worldSize: s.worldSize, agentStore: false, scheduler: s };
}

function intEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const v = Number(raw);
  if (!Number.isInteger(v)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return v;
}
