import { randomBytes } from "node:crypto";
import { CommClient } from "../comm_client.js";
import { readCommEnv } from "../env.js";
import { attachInlineRunner } from "../inline_runner.js";
import { tryLoadCommNative } from "../native.js";
import { TCPStore } from "../store/tcp_store.js";
import { StoreHost } from "../store_host.js";
import { workerConfig } from "../worker_config.js";
import type { HostLayout } from "./hosts.js";
import type { MpiClient } from "./mpi_client.js";

/** ringtorch's shared-memory transport between the ranks of an mpi job that all run on one host. */
export interface LocalShm {
  client: CommClient;
  store: TCPStore;
  /** Hosted by rank 0 only. */
  storeHost: StoreHost | null;
  prefix: string;
}

export type MpiAllReduceMode = "auto" | "mpi" | "shm" | "hier";

/**
 * RINGTORCH_MPI_ALLREDUCE: "auto" (default) runs the all-reduce on ringtorch's shared memory when
 * every rank is on one host, hierarchically (mpi/hier_client.ts) when the job spans hosts that run
 * equally many ranks (2 or more each), and on MPI otherwise; "mpi" always on MPI; "shm" requires
 * one host; "hier" requires several hosts (hosts with unequal counts fall back to MPI, with a warning).
 */
export function mpiAllReduceMode(env: NodeJS.ProcessEnv = process.env): MpiAllReduceMode {
  const v = (env.RINGTORCH_MPI_ALLREDUCE ?? "auto").toLowerCase();
  if (v !== "auto" && v !== "mpi" && v !== "shm" && v !== "hier") throw new Error(`RINGTORCH_MPI_ALLREDUCE must be auto, mpi, shm or hier, got ${JSON.stringify(env.RINGTORCH_MPI_ALLREDUCE)}`);
  return v;
}

/** The rendezvous rank 0 sends the others over MPI: its store's port and the job's fresh secret. */
const RENDEZVOUS_BYTES = 128;
/** The longest the shared-memory transport may take to connect (see setupMs). */
const SETUP_MS = 120_000;

/**
 * Why shared memory: on one host, Open MPI's all-reduce measured 0.2–0.55× ringtorch's own
 * shared-memory transport (its vader BTL copies each message at least once more, and its tuned
 * algorithms reduce outside the transfer), so an mpi job all-reduces among the ranks of one host on
 * ringtorch's transport, as NCCL and Horovod keep the traffic within a host on their own
 * shared-memory path. The transport joins the ranks of this rank's host (`layout`; all ranks when
 * the job is on one host). The rendezvous rides on MPI itself: each host's lowest rank hosts a
 * store on the loopback address with a fresh token, and every rank learns where its host's is
 * from one allgather; no MASTER_ADDR, port or token is asked of the user.
 *
 * Every rank then says over MPI whether its side started; unless all did, all close theirs and
 * return null (or throw, when `strict` names the mode that required it), so that the ranks never
 * disagree on where the all-reduce runs.
 */
export async function startLocalShm(mpi: MpiClient, layout: HostLayout, strict: string | null, timeoutMs: number, gen: number): Promise<LocalShm | null> {
  const leader = layout.localRank === 0;
  const prefix = `ringtorch/mpi/pg${gen}/host${layout.host}`;
  // A rank whose side fails at once leaves the others waiting for it to connect until this passes;
  // MPI_Allreduce is a working fallback, so that wait is bounded well below a collective's 30 minutes.
  const setupMs = Math.min(timeoutMs, SETUP_MS);
  const where = new Uint8Array(RENDEZVOUS_BYTES);
  let storeHost: StoreHost | null = null;
  let hostError: string | null = null;
  if (leader) {
    const token = randomBytes(24).toString("hex");
    try {
      storeHost = await StoreHost.start({ host: "127.0.0.1", port: 0, token });
      where.set(new TextEncoder().encode(`${storeHost.port} ${token}`));
    } catch (err) {
      hostError = (err as Error).message;
    }
  }
  // A leader sends zeros when it could not host: its host's ranks then skip straight to the agreement.
  const all = mpi.allGatherBytes(where);
  const at = layout.members[layout.host]![0]! * RENDEZVOUS_BYTES;
  const [portText, token] = new TextDecoder().decode(all.subarray(at, at + RENDEZVOUS_BYTES)).replace(/\0+$/, "").split(" ");
  let local: LocalShm | null = null;
  let error = hostError;
  const native = tryLoadCommNative();
  if (!native) {
    error = "the native addon with the transports is not built (run `npm run build:native`)";
  } else if (portText && token) {
    const abort = new AbortController();
    let starting: Promise<CommClient> | null = null;
    let connecting: Promise<TCPStore> | null = null;
    try {
      // Inside the try: a bad knob in this rank's environment must reach the agreement below, not leave the others waiting in it.
      const cfg = workerConfig(readCommEnv(), { rank: layout.localRank, world: layout.localSize, token, storeHost: "127.0.0.1", storePort: Number(portText), prefix, timeoutMs: setupMs });
      cfg.transport = "shm";
      connecting = TCPStore.connect({ host: "127.0.0.1", port: Number(portText), token, timeoutMs: setupMs, signal: abort.signal });
      starting = CommClient.start(cfg, abort.signal);
      const [store, client] = await Promise.all([connecting, starting]);
      attachInlineRunner(native, client, cfg, store, prefix);
      local = { client, store, storeHost, prefix };
    } catch (err) {
      abort.abort();
      void starting?.then((c) => c.shutdown(), () => {});
      void connecting?.then((s) => s.close(), () => {});
      error = (err as Error).message;
    }
  } else if (error === null) {
    error = `rank ${layout.members[layout.host]![0]} could not host its host's store`;
  }
  // A rank that failed at once waits here while the others' setup runs out: give it that long and more.
  const failedRanks = mpi.ranksThatFailed(local === null, Math.max(timeoutMs, setupMs + SETUP_MS));
  if (failedRanks.length === 0) return local;
  if (local) await closeLocalShm(local);
  else await storeHost?.close().catch(() => {});
  const why = `the shared-memory transport did not start on rank(s) ${failedRanks.join(", ")}${error ? ` (here: ${error})` : ""}`;
  if (strict !== null) throw new Error(`initProcessGroup: RINGTORCH_MPI_ALLREDUCE=${strict}, but ${why}`);
  if (mpi.rank === 0 && process.env.RINGTORCH_QUIET !== "1") console.warn(`ringtorch: the mpi backend all-reduces on MPI: ${why}`);
  return null;
}

/** Stops this rank's side of the transport: after another rank's did not start, or when the group is destroyed. */
export async function closeLocalShm(local: LocalShm): Promise<void> {
  await local.client.shutdown();
  await local.store.close().catch(() => {});
  await local.storeHost?.close().catch(() => {});
}
