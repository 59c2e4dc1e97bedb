import { launch, explain } from "../test/distributed/harness.js";
const r = await launch({ world: 3, script: process.argv[2], timeoutMs: 120000, env: { RINGTORCH_NUM_THREADS: "1", DIR: process.argv[3], PHASE: "save" } });
for (const x of r) if (x.code !== 0) console.log(explain(r));
