import { defaultWorld } from "../data/distributed_sampler.js";
import { CommClient } from "./comm_client.js";
import { readCommEnv } from "./env.js";
import type { WorkerConfig } from "./engine/messages.js";
import { attachInlineRunner } from "./inline_runner.js";
import { MpiClient } from "./mpi/mpi_client.js";
import { loadMpiNative } from "./mpi/mpi_native.js";
import { closeLocalShm, mpiAllReduceMode, type LocalShm } from "./mpi/local_shm.js";
import { mpiAllReducePath } from "./mpi/all_reduce_path.js";
import { HierClient } from "./mpi/hier_client.js";
import { SplitClient } from "./mpi/split_client.js";
import { singleCpuBindingWarning } from "./mpi/binding.js";
import { loadCommNative, tryLoadCommNative } from "./native.js";
import { ProcessGroup, type Runtime } from "./process_group.js";
import { type Rendezvous, resolveRendezvous } from "./rendezvous.js";
import { STORE_TOKEN_ENV } from "./store/token.js";
import { TCPStore } from "./store/tcp_store.js";
import { StoreHost } from "./store_host.js";
import { readTokenFile, readTokenFileEnv, removeTokenFile, STORE_TOKEN_FILE_ENV, tokenFilePath, writeTokenFile, isLoopback } from "./token_file.js";
import { DistributedError } from "./work.js";
import { workerConfig } from "./worker_config.js";
import { checkArity, checkOptions } from "../util/options.js";
import { traceGroupHook, tracing } from "../util/trace.js";

export interface InitOptions {
  /**
   * "ringtorch" (also accepted: "gloo", "cpu", as aliases for scripts ported from torch), or
   * "mpi": collectives on the system's MPI library, under mpirun (see initMpi).
   */
  backend?: string;
  /** "env://" (default: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) or "tcp://host:port". */
  initMethod?: string;
  rank?: number;
  worldSize?: number;
  /** Timeout of the rendezvous and default timeout of every collective (30 minutes, as torch). */
  timeoutMs?: number;
  /** The job's secret; RINGTORCH_STORE_TOKEN when left out (see resolveToken). */
  token?: string;
}

interface World {
  runtime: Runtime;
  world: ProcessGroup;
  client: CommClient | null;
  /** The mpi backend's client, instead of `client`, `store` and the transports. */
  mpi?: MpiClient;
  /** The mpi backend's shared memory among this host's ranks, for the hierarchical all-reduce. */
  mpiHostShm?: LocalShm | null;
  store: TCPStore | null;
  storeHost: StoreHost | null;
  prefix: string;
  tokenFile: string | null;
  nextGroupId: number;
}

const DEFAULT_TIMEOUT_MS = 30 * 60 * 1000;
let current: World | null = null;
let generation = 0;

export function currentWorld(where: string): World {
  if (!current) throw new Error(`${where}: the default process group is not initialised; call \`await dist.initProcessGroup()\` first`);
  return current;
}

/**
 * Joins this process to the job (torch.distributed.init_process_group). Without a launcher,
 * rank 0 hosts the store at MASTER_ADDR:MASTER_PORT (on its own thread); with ringrun
 * (RINGTORCH_USE_AGENT_STORE=1) every rank connects to ringrun's. Then the communication worker
 * connects every pair of ranks (shared memory on one machine, TCP between machines).
 */
export async function initProcessGroup(opts: InitOptions | string = {}): Promise<ProcessGroup> {
  checkArity("initProcessGroup", arguments, 1, 'await dist.initProcessGroup({ backend, initMethod, rank, worldSize, timeoutMs, token })');
  // PyTorch's first positional is the backend: init_process_group("gloo") ports as it is.
  if (typeof opts === "string") opts = { backend: opts };
  checkOptions("initProcessGroup", opts, ["backend", "initMethod", "rank", "worldSize", "timeoutMs", "token"]);
  if (current) throw new Error("initProcessGroup: the default process group is already initialised; call destroyProcessGroup() first");
  const backend = opts.backend ?? "ringtorch";
  if (backend === "mpi") return initMpi(opts);
  if (!["ringtorch", "gloo", "cpu"].includes(backend)) {
    throw new Error(`initProcessGroup: backend ${JSON.stringify(backend)} is not available; ringtorch has one CPU backend, "ringtorch" (alias "gloo")`);
  }
  const cenv = readCommEnv();
  const timeoutMs = opts.timeoutMs ?? cenv.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const rdzv = resolveRendezvous(opts);
  if (rdzv.scheduler) publishSchedulerEnv(rdzv);
  const gen = generation++;
  const runtime: Runtime = { rank: rdzv.rank, worldSize: rdzv.worldSize, client: null, timeoutMs, debugDetail: cenv.debugDetail, destroyed: false };
  const world: World = { runtime, world: new ProcessGroup(0, range(rdzv.worldSize), runtime), client: null, store: null, storeHost: null, prefix: "", tokenFile: null, nextGroupId: 1 };
  if (rdzv.worldSize > 1) {
    if (!tryLoadCommNative()) throw new Error("initProcessGroup: the native addon with the transports is not built; run `npm run build:native`");
    try {
      await join(world, rdzv, opts, timeoutMs, gen, (token) =>
        workerConfig(cenv, { rank: rdzv.rank, world: rdzv.worldSize, token, storeHost: rdzv.host, storePort: rdzv.port, prefix: world.prefix, timeoutMs }),
      );
      (runtime as { client: CommClient | null }).client = world.client;
    } catch (err) {
      await world.client?.shutdown();
      await world.store?.close();
      await world.storeHost?.close();
      if (world.tokenFile && rdzv.rank === 0) removeTokenFile(world.tokenFile);
      throw err instanceof DistributedError ? err : new DistributedError(`initProcessGroup (rank ${rdzv.rank} of ${rdzv.worldSize}): ${(err as Error).message}`);
    }
  }
  // While tracing, every rank measures its clock against rank 0's here, before any collective.
  if (tracing.on) await traceGroupHook.onInit?.({ rank: rdzv.rank, worldSize: rdzv.worldSize, store: world.store, prefix: world.prefix });
  current = world;
  defaultWorld.rank = () => current?.runtime.rank;
  defaultWorld.worldSize = () => current?.runtime.worldSize;
  return world.world;
}

/**
 * Hosts the store (rank 0 without a launcher), connects this thread's store client, and starts
 * the communication worker, all at once: the worker's start-up is the slow part and needs nothing
 * but the token. The token is RINGTORCH_STORE_TOKEN (or `opts.token`); without one, a job whose
 * store is on a loopback address shares a fresh token through a private file (token_file.ts),
 * and any other job is refused, since its store would admit anyone who can reach it.
 */
async function join(world: World, rdzv: Rendezvous, opts: InitOptions, timeoutMs: number, gen: number, config: (token: string) => WorkerConfig): Promise<void> {
  world.prefix = `${process.env.RINGTORCH_STORE_PREFIX ?? ""}ringtorch/pg${gen}`;
  const given = opts.token ?? (process.env[STORE_TOKEN_ENV] || undefined) ?? readTokenFileEnv();
  const deadline = Date.now() + timeoutMs;
  let token = given;
  if (!token) {
    if (rdzv.agentStore) throw new Error(`RINGTORCH_USE_AGENT_STORE=1 but ${STORE_TOKEN_ENV} is not set; ringrun sets both`);
    if (!isLoopback(rdzv.host)) {
      throw new Error(
        `no job token: the store at ${rdzv.host}:${rdzv.port} is reachable from other machines, so every rank must share a secret. ` +
          `Set ${STORE_TOKEN_ENV} to the same value on every rank (e.g. \`export ${STORE_TOKEN_ENV}=$(openssl rand -hex 24)\`), or ${STORE_TOKEN_FILE_ENV} ` +
          `to a file only the job's user can read that holds it, or launch with ringrun, which makes one.`,
      );
    }
    world.tokenFile = tokenFilePath(rdzv.host, rdzv.port);
    if (rdzv.rank === 0) token = writeTokenFile(world.tokenFile);
    else token = await connectWithTokenFile(world, rdzv, world.tokenFile, deadline);
  }
  const abort = new AbortController();
  const hosting = rdzv.rank === 0 && !rdzv.agentStore ? StoreHost.start({ host: rdzv.host, port: rdzv.port, token: token! }) : Promise.resolve(null);
  const connecting = world.store
    ? Promise.resolve(world.store)
    : TCPStore.connect({ host: rdzv.host, port: rdzv.port, token: token!, timeoutMs: Math.max(1, deadline - Date.now()), signal: abort.signal });
  const cfg = config(token!);
  const starting = CommClient.start(cfg, abort.signal);
  try {
    [world.storeHost, world.store, world.client] = await Promise.all([hosting, connecting, starting]);
    attachInlineRunner(loadCommNative(), world.client, cfg, world.store, world.prefix);
  } catch (err) {
    // Fail at the first error (a port in use should not wait out the others' timeouts), and
    // release whatever the other two still produce.
    abort.abort();
    void starting.then((c) => c.shutdown(), () => {});
    world.storeHost = null;
    world.store = null;
    world.client = null;
    await leaveFailedSetup(rdzv, `${world.prefix}/setup_failed`, hosting, connecting);
    throw err;
  }
}

/** How long a store-hosting rank whose setup failed keeps serving for the others to read what it published. */
const SETUP_FAILURE_GRACE_MS = 5_000;

/**
 * Every rank that fails setup says so in the store; the rank hosting it keeps serving until each
 * other rank has said so too (or for a bounded grace), since its peers may still be reading what it
 * published. A mismatch that both ends detect (different TCP stream counts) would otherwise reach
 * the other rank as a lost connection instead of the mismatch, whenever the host exits first.
 */
async function leaveFailedSetup(rdzv: Rendezvous, prefix: string, hosting: Promise<StoreHost | null>, connecting: Promise<TCPStore>): Promise<void> {
  const [host, store] = await Promise.all([hosting.catch(() => null), connecting.catch(() => null)]);
  if (store) {
    await store.set(`${prefix}/${rdzv.rank}`, "1").catch(() => {});
    if (host) {
      const others = range(rdzv.worldSize).filter((r) => r !== rdzv.rank).map((r) => `${prefix}/${r}`);
      await store.wait(others, SETUP_FAILURE_GRACE_MS).catch(() => {});
    }
    await store.close().catch(() => {});
  }
  await host?.close().catch(() => {});
}

/** A rank other than 0 reads rank 0's token file; one left by an earlier job on this port is replaced before rank 0 listens. */
async function connectWithTokenFile(world: World, rdzv: Rendezvous, path: string, deadline: number): Promise<string> {
  for (;;) {
    const token = readTokenFile(path);
    try {
      if (!token) throw new Error(`rank 0 has not written the job token (${path}) yet`);
      world.store = await TCPStore.connect({ host: rdzv.host, port: rdzv.port, token, timeoutMs: Math.max(1, deadline - Date.now()) });
      return token;
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Leaves the job: stops the comm worker, closes transports and (rank 0) the store it hosts. */
export async function destroyProcessGroup(group?: ProcessGroup): Promise<void> {
  const w = current;
  if (!w) return;
  if (group && group !== w.world) {
    group.destroyed = true;
    return;
  }
  current = null;
  w.runtime.destroyed = true;
  defaultWorld.rank = () => undefined;
  defaultWorld.worldSize = () => undefined;
  await w.client?.shutdown();
  if (w.mpi) {
    mpiFinalized = true;
    await w.mpi.shutdown();
    if (w.mpiHostShm) await closeLocalShm(w.mpiHostShm);
  }
  if (w.store) {
    const me = w.runtime.rank;
    await w.store.set(`${w.prefix}/destroyed/${me}`, "1").catch(() => {});
    if (w.storeHost) {
      // Keep serving until the other ranks have left too (they may still use the store), but not forever.
      const keys = range(w.runtime.worldSize).map((r) => `${w.prefix}/destroyed/${r}`);
      await w.store.wait(keys, Math.min(w.runtime.timeoutMs, 10_000)).catch(() => {});
    }
    await w.store.close();
  }
  await w.storeHost?.close();
  if (w.tokenFile && w.runtime.rank === 0) removeTokenFile(w.tokenFile);
}

export function isInitialized(): boolean {
  return current !== null;
}

/** Whether this build can run multi-process groups (the native transports are present). */
export function isAvailable(): boolean {
  return tryLoadCommNative() !== null;
}

export function getBackend(): string {
  return current?.mpi ? "mpi" : "ringtorch";
}

/** This process's rank in `group` (default: the whole job); -1 when it is not a member. */
export function getRank(group?: ProcessGroup): number {
  return group ? group.rank : currentWorld("getRank").runtime.rank;
}

export function getWorldSize(group?: ProcessGroup): number {
  return group ? group.size : currentWorld("getWorldSize").runtime.worldSize;
}

/**
 * A group of some ranks (torch.distributed.new_group). Every rank of the job must call it, in
 * the same order, with the same ranks, even ranks that are not members. Groups share the job's
 * transports; their collectives are numbered apart.
 */
export function newGroup(ranks?: number[]): ProcessGroup {
  const w = currentWorld("newGroup");
  const n = w.runtime.worldSize;
  const members = ranks === undefined ? range(n) : [...new Set(ranks)].sort((a, b) => a - b);
  if (ranks !== undefined && members.length !== ranks.length) throw new Error(`newGroup: ranks [${ranks.join(", ")}] repeat a rank`);
  for (const r of members) {
    if (!Number.isInteger(r) || r < 0 || r >= n) throw new Error(`newGroup: rank ${r} is not a rank of the job (0..${n - 1})`);
  }
  if (members.length === 0) throw new Error("newGroup: a group needs at least one rank");
  const id = w.nextGroupId++;
  w.mpi?.addGroup(id, members, w.runtime.timeoutMs);
  w.client?.addGroup(id, members);
  return new ProcessGroup(id, members, w.runtime);
}

export function getProcessGroupRanks(group: ProcessGroup): number[] {
  return [...group.ranks];
}

export function getGlobalRank(group: ProcessGroup, groupRank: number): number {
  const r = group.ranks[groupRank];
  if (r === undefined) throw new Error(`getGlobalRank: the group has ranks 0..${group.size - 1}, not ${groupRank}`);
  return r;
}

export function getGroupRank(group: ProcessGroup, globalRank: number): number {
  return group.groupRankOf(globalRank, "getGroupRank");
}

/** The transport this rank uses to each rank ("self", "shm" or "tcp"); for tests and diagnostics. */
export function getTransports(): string[] {
  const w = currentWorld("getTransports");
  if (w.mpi) return range(w.runtime.worldSize).map((r) => (r === w.runtime.rank ? "self" : "mpi"));
  return w.client ? [...w.client.transports] : ["self"];
}

let mpiFinalized = false;

/**
 * initProcessGroup({ backend: "mpi" }): rank and world size come from MPI itself (so the script
 * must run under mpirun or srun --mpi), and the collectives run on MPI (mpi/mpi_client.ts), except
 * the world's all-reduce, which runs on ringtorch's shared memory when every rank is on one host
 * (mpi/local_shm.ts) and hierarchically across hosts with equal rank counts (mpi/hier_client.ts);
 * mpi/all_reduce_path.ts chooses, RINGTORCH_MPI_ALLREDUCE=mpi keeps it on MPI. No MASTER_ADDR or token
 * is asked of the user: that transport's rendezvous rides on MPI. MPI can start only once per process.
 */
async function initMpi(opts: InitOptions): Promise<ProcessGroup> {
  for (const k of ["initMethod", "rank", "worldSize", "token"] as const) {
    if (opts[k] !== undefined) throw new Error(`initProcessGroup: backend "mpi" takes rank and world size from MPI; leave out ${k}`);
  }
  if (mpiFinalized) throw new Error('initProcessGroup: backend "mpi" cannot start again in this process (MPI allows one MPI_Init per process)');
  const timeoutMs = opts.timeoutMs ?? readCommEnv().timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const mode = mpiAllReduceMode();
  const mpi = new MpiClient(loadMpiNative(), timeoutMs);
  const { rank, size } = mpi;
  const bound = singleCpuBindingWarning(rank);
  if (bound && rank === 0 && process.env.RINGTORCH_QUIET !== "1") console.warn(bound);
  const path = await mpiAllReducePath(mpi, mode, timeoutMs, generation++);
  const local = path?.local ?? null;
  const hier = path !== null && path.crossGroup !== null;
  const client = !local ? mpi : hier ? new HierClient(mpi, local.client, path.layout, path.crossGroup!) : new SplitClient(mpi, local.client);
  const runtime: Runtime = { rank, worldSize: size, client, timeoutMs, debugDetail: false, destroyed: false };
  // The hierarchical path's transport joins only this host's ranks: the world's groups and
  // teardown do not go through it, and it closes after MPI has finalised (every rank is done).
  const world: World = {
    runtime,
    world: new ProcessGroup(0, range(size), runtime),
    client: hier ? null : (local?.client ?? null),
    mpi,
    mpiHostShm: hier ? local : null,
    store: hier ? null : (local?.store ?? null),
    storeHost: hier ? null : (local?.storeHost ?? null),
    prefix: hier ? "" : (local?.prefix ?? ""),
    tokenFile: null,
    nextGroupId: path?.nextGroupId ?? 1,
  };
  current = world;
  defaultWorld.rank = () => current?.runtime.rank;
  defaultWorld.worldSize = () => current?.runtime.worldSize;
  for (const [k, v] of Object.entries({ RANK: rank, WORLD_SIZE: size })) if (process.env[k] === undefined) process.env[k] = String(v);
  return world.world;
}

/**
 * Ranks that srun or mpirun started get the torchrun variables they would have had under ringrun,
 * so that what reads them (samplers, tracking, progress bars, checkpoints' run id) sees the same
 * job as the process group. Set only where absent: a user's own value stands.
 */
function publishSchedulerEnv(rdzv: Rendezvous): void {
  const s = rdzv.scheduler!;
  const values: Record<string, string | undefined> = {
    RANK: String(rdzv.rank),
    WORLD_SIZE: String(rdzv.worldSize),
    LOCAL_RANK: String(s.localRank),
    LOCAL_WORLD_SIZE: s.localWorldSize === undefined ? undefined : String(s.localWorldSize),
    MASTER_ADDR: rdzv.host,
    MASTER_PORT: String(rdzv.port),
    RINGTORCH_RUN_ID: s.jobId.split(".")[0]!.replace(/[^\w.-]/g, "_"),
    // Two job steps that share a port (a user's MASTER_PORT) never read each other's keys.
    RINGTORCH_STORE_PREFIX: `${s.source.replace(/ /g, "").toLowerCase()}/${s.jobId}/`,
  };
  for (const [k, v] of Object.entries(values)) if (v !== undefined && process.env[k] === undefined) process.env[k] = v;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

