import { launch, explain } from "../test/distributed/harness.js";
const r = await launch({ world: 2, script: process.argv[2], timeoutMs: 120000, env: { RINGTORCH_NUM_THREADS: "1" } });
console.log(explain(r));
