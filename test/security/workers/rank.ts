// A rank for the transport tests: joins the job (env://, from the torchrun variables), the rank
// named by DELAY_RANK only once the file GATE_FILE exists; all-reduces its rank + 1 by product
// and prints RESULT.
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import * as dist from "../../../src/distributed/index.js";

if (process.env.RANK === process.env.DELAY_RANK) {
  for (let i = 0; i < 2400 && !existsSync(process.env.GATE_FILE!); i++) await sleep(50);
}
console.log("JOINING");
const t0 = Date.now();
await dist.initProcessGroup({ timeoutMs: Number(process.env.INIT_TIMEOUT_MS ?? 30_000) });
console.log(`JOINED after ${Date.now() - t0} ms`);
const x = new Int32Array(new SharedArrayBuffer(8)).fill(dist.getRank() + 1);
dist.allReduce(x, { op: dist.ReduceOp.PRODUCT });
console.log(`RESULT ${JSON.stringify({ rank: dist.getRank(), product: Array.from(x), transports: dist.getTransports() })}`);
await dist.destroyProcessGroup();
console.log(`LEFT after ${Date.now() - t0} ms`);
