// One rank of test/metrics/metrics.test.ts: this rank's strided share of every sample, reduced
// across ranks by compute().
import * as rt from "../../../src/index.js";
import { computeAll } from "../common.js";

await rt.dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = rt.dist.getRank();
const world = rt.dist.getWorldSize();
const result = computeAll((i) => i % world === rank);
console.log("RESULT " + JSON.stringify(result));
rt.dist.destroyProcessGroup();
