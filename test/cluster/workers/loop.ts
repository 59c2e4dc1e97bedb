// One task of a job that runs until it is cancelled (test/cluster/*.test.ts: scancel, mpirun
// interrupted): all-reduces forever, so every rank is inside the comm engine when the signal comes.
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ timeoutMs: 60_000 });
const x = new Float32Array(new SharedArrayBuffer(4 * 4096));
dist.allReduce(x);
console.log(`READY ${dist.getRank()} ${process.pid}`);
for (;;) {
  dist.allReduce(x.fill(1));
  await new Promise((r) => setTimeout(r, 5));
}
