// One rank of test/cluster/mpi.test.ts's fallback case: under mpirun, rank 1 gets a shared-memory
// setting out of range (RINGTORCH_SHM_SLOTS=1), so its side of the shared-memory all-reduce cannot
// start. With RINGTORCH_MPI_ALLREDUCE=auto every rank falls back to MPI_Allreduce and the sum is
// still right; with =shm every rank fails init naming the rank.
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ backend: "mpi", timeoutMs: 5_000 });
const n = 1001;
const t = new Float32Array(new SharedArrayBuffer(4 * n)).fill(dist.getRank() + 1);
dist.allReduce(t);
const want = (dist.getWorldSize() * (dist.getWorldSize() + 1)) / 2;
console.log(`RESULT ${JSON.stringify({ rank: dist.getRank(), ok: t.every((v) => v === want) })}`);
await dist.destroyProcessGroup();
