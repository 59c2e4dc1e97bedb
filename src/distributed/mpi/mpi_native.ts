import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TypedArray } from "../dtypes.js";

/** Operation kinds of native/mpi/mpi_thread.h. */
export const MPI_KIND = {
  allReduce: 1,
  broadcast: 2,
  reduce: 3,
  allGather: 4,
  reduceScatter: 5,
  scatter: 6,
  gather: 7,
  allToAll: 8,
  barrier: 9,
  send: 10,
  recv: 11,
  split: 12,
  finalize: 13,
  /** See native/mpi/mpi_thread.h: waits on a gate the transport's thread opens, all-reduces, opens the next. */
  gatedAllReduce: 14,
} as const;

/** What MPI said about this job when it started. */
export interface MpiJob {
  rank: number;
  size: number;
  library: string;
  /** Every rank's pid and host (MPI_Get_processor_name), so that a rank can see a local peer die. */
  pids: number[];
  hosts: string[];
  /** The largest tag point-to-point messages may carry (MPI_TAG_UB). */
  tagUpperBound: number;
}

/**
 * The optional MPI addon (native/mpi/, built by scripts/build-mpi.js only where mpicxx is
 * installed). Its own thread calls MPI, running posted operations in order; counts are elements
 * of `dtype` (DTYPE_CODE's float32, float64, int32; any other code moves bytes); op codes sum 0,
 * product 1, min 2, max 3.
 */
export interface MpiNative {
  mpiVersion: number;
  /** Starts MPI on the addon's thread; `notify` runs on this thread after operations finish. */
  init(notify: () => void): MpiJob;
  /**
   * Queues one operation; returns its id. `ints`: all-to-all's send counts, send displacements,
   * receive counts and receive displacements; a split's [member, key, group id].
   */
  post(
    kind: number,
    comm: number,
    a: TypedArray | null,
    aByteOffset: number,
    aBytes: number,
    b: TypedArray | null,
    bByteOffset: number,
    bBytes: number,
    count: number,
    dtype: number,
    op: number,
    root: number,
    peer: number,
    tag: number,
    ints: Int32Array | null,
  ): number;
  /** Whether operation `id` finished within `ms` (0: just look; it is then forgotten); throws MPI's error. */
  wait(id: number, ms: number): boolean;
  /** Keeps the event loop alive for `notify` (while operations are in flight) or not. */
  ref(on: boolean): void;
}

const MPI_VERSION = 3;
let cached: MpiNative | undefined;

function addonPath(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "build", "Release", "ringtorch_mpi.node");
}

/** The MPI addon, or an error that says how to get it. */
export function loadMpiNative(): MpiNative {
  if (cached) return cached;
  const path = addonPath();
  if (!existsSync(path)) {
    throw new Error(
      `initProcessGroup: backend "mpi" needs the MPI addon (${path}), which is built only where an MPI library is installed: ` +
        "install Debian's libopenmpi-dev (apt-get install libopenmpi-dev openmpi-bin), then run `npm run build:native`. " +
        "Under mpirun without it, leave the backend out: ringtorch's own transports run the collectives.",
    );
  }
  const addon = createRequire(import.meta.url)(path) as MpiNative;
  if (addon.mpiVersion !== MPI_VERSION) {
    throw new Error(`the MPI addon (${path}) was built from other sources (version ${addon.mpiVersion}, expected ${MPI_VERSION}); run \`npm run build:native\``);
  }
  return (cached = addon);
}
