// One task of a job in which rank 1 dies mid-collective (test/cluster/*.test.ts). The others do
// not catch the error: what the user sees is ringtorch's uncaught DistributedError naming rank 1.
// DIE_BY=exit makes rank 1 exit with status 3 instead of being SIGKILLed.
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
console.log(`READY ${rank} ${process.pid}`);
const floats = (n: number) => new Float32Array(new SharedArrayBuffer(4 * n)).fill(1);
dist.allReduce(floats(1000));
if (rank === 1) {
  // Inside its own part of a large all-reduce, so that the others are already waiting on it.
  dist.allReduce(floats(16 << 20), { async: true });
  await new Promise((r) => setTimeout(r, 2));
  if (process.env.DIE_BY === "exit") process.exit(3);
  process.kill(process.pid, "SIGKILL");
}
dist.allReduce(floats(16 << 20));
console.log(`rank ${rank} finished, which it must not`);
