import { test } from "node:test";
import assert from "node:assert/strict";
import { explain, launch } from "../distributed/harness.js";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("./workers/ddp_equivalence.ts", import.meta.url));

interface Outcome {
  failures: string[];
  checks: string[];
  overlap: { readyParams: number; totalParams: number; launches: number };
}

for (const world of [2, 3, 4]) {
  test(`DDP on ${world} ranks takes the same steps as one process on the whole batch`, async () => {
    const results = await launch({ world, script: WORKER, timeoutMs: 120_000, env: { RINGTORCH_NUM_THREADS: "1" } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const outcomes = results.map((r) => r.result as Outcome);
    assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
    assert.equal(outcomes[0].checks.length, 14, `checks run: ${outcomes[0].checks.join(", ")}`);
    // Overlap: with many buckets, the first all-reduce started while most gradients were still to come.
    const { readyParams, totalParams, launches } = outcomes[0].overlap;
    assert.ok(launches > 2, `expected several buckets, got ${launches}`);
    assert.ok(readyParams < totalParams, `the first bucket launched only after all ${totalParams} gradients were ready`);
  });
}
