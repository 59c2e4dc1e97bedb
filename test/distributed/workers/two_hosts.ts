// A rank on one of two "hosts" (network namespaces with their own /dev/shm), for two_hosts.test.ts.
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const n = 300_001;
const x = new Float64Array(new SharedArrayBuffer(8 * n));
for (let i = 0; i < n; i++) x[i] = rank * 1000 + (i % 97);
dist.allReduce(x);
let bad = -1;
for (let i = 0; i < n && bad < 0; i++) {
  let want = 0;
  for (let r = 0; r < world; r++) want += r * 1000 + (i % 97);
  if (x[i] !== want) bad = i;
}
const gathered = new Int32Array(new SharedArrayBuffer(4 * world));
dist.allGatherIntoTensor(gathered, new Int32Array(new SharedArrayBuffer(4)).fill(rank + 10));
console.log(`RESULT ${JSON.stringify({ firstBad: bad, gathered: Array.from(gathered), transports: dist.getTransports() })}`);
await dist.destroyProcessGroup();
