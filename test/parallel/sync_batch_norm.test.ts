import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const WORKER = fileURLToPath(new URL("./workers/sync_batch_norm.ts", import.meta.url));

for (const world of [2, 4]) {
  test(`SyncBatchNorm on ${world} ranks with uneven batches equals BatchNorm on the whole batch in one process; DDP broadcasts BatchNorm buffers`, async () => {
    const results = await launch({ world, script: WORKER, timeoutMs: 120_000, env: { RINGTORCH_NUM_THREADS: "1" } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const outcomes = results.map((r) => r.result as { failures: string[]; checks: string[] });
    assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
    // 2 steps × (output, input gradient, 8 parameters, 6 buffers) + the eval output + DDP's buffer broadcast.
    for (const o of outcomes) assert.equal(o.checks.length, 2 * 16 + 2, `checks run: ${o.checks.join(", ")}`);
  });
}
