// One task of a job in which rank 1 dies mid-collective (test/cluster/*.test.ts). The others do
// not catch the error: what the user sees is ringtorch's uncaught DistributedError naming rank 1.
// DIE_BY=exit makes rank 1 exit with status 3 instead of being SIGKILLed; RINGTORCH_TEST_BACKEND=mpi
// runs it on the mpi backend (test/cluster/mpi.test.ts). DIE_BY=stall: rank 1 does not call all-reduce
// #2 at all and exits well after the others' 3 s timeout.
import * as dist from "../../../src/distributed/index.js";

const timeoutMs = process.env.DIE_BY === "stall" ? 3_000 : 60_000;
await dist.initProcessGroup(process.env.RINGTORCH_TEST_BACKEND === "mpi" ? { backend: "mpi", timeoutMs } : { timeoutMs });
const rank = dist.getRank();
console.log(`READY ${rank} ${process.pid}`);
const floats = (n: number) => new Float32Array(new SharedArrayBuffer(4 * n)).fill(1);
dist.allReduce(floats(1000));
if (rank === 1 && process.env.DIE_BY === "stall") {
  await new Promise((r) => setTimeout(r, 3 * timeoutMs));
  process.exit(0);
}
if (rank === 1) {
  // Inside its own part of a large all-reduce, so that the others are already waiting on it.
  dist.allReduce(floats(16 << 20), { async: true });
  await new Promise((r) => setTimeout(r, 2));
  if (process.env.DIE_BY === "exit") process.exit(3);
  process.kill(process.pid, "SIGKILL");
}
dist.allReduce(floats(16 << 20));
console.log(`rank ${rank} finished, which it must not`);
