import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TypedArray } from "../dtypes.js";

/**
 * The optional MPI addon (native/mpi/mpi_addon.cc, built by scripts/build-mpi.js only where
 * mpicxx is installed). Counts are elements; dtype codes are DTYPE_CODE's float32, float64,
 * int32 and uint8; op codes sum 0, product 1, min 2, max 3. Each i* call starts a nonblocking
 * MPI collective on MPI_COMM_WORLD and returns a request id that `test` progresses.
 */
export interface MpiNative {
  mpiVersion: number;
  init(): { rank: number; size: number; library: string };
  iallReduce(buf: TypedArray, byteOffset: number, count: number, dtype: number, op: number): number;
  ibroadcast(buf: TypedArray, byteOffset: number, count: number, dtype: number, root: number): number;
  iallGather(input: TypedArray, inByteOffset: number, output: TypedArray, outByteOffset: number, count: number, dtype: number): number;
  ibarrier(): number;
  /** Whether the request finished (its id is then free); throws MPI's error. */
  test(id: number): boolean;
  finalize(): void;
}

const MPI_VERSION = 1;
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
