import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const PARITY = fileURLToPath(new URL("./workers/fsdp_parity.ts", import.meta.url));
const CHECKS = fileURLToPath(new URL("./workers/fsdp_checks.ts", import.meta.url));

interface Outcome {
  failures: string[];
  checks: string[];
}

for (const world of [2, 3]) {
  test(`FSDP on ${world} ranks takes DDP's steps: every rank's shards match DDP's rows after every step`, async () => {
    const results = await launch({ world, script: PARITY, timeoutMs: 120_000, env: { RINGTORCH_NUM_THREADS: "1" } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const outcomes = results.map((r) => r.result as Outcome);
    assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
    assert.equal(outcomes[0].checks.length, 7, `scenarios run: ${outcomes[0].checks.join(", ")}`);
  });
}

test("FSDP and ZeRO-1 memory after the step follow the ZeRO formulas; ZeRO-1 takes the plain optimizer's steps; a skipped unit is named", async () => {
  const results = await launch({ world: 2, script: CHECKS, timeoutMs: 120_000, env: { RINGTORCH_NUM_THREADS: "1" } });
  for (const r of results) assert.equal(r.code, 0, explain(results));
  const outcomes = results.map((r) => r.result as Outcome);
  assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
  assert.equal(outcomes[0].checks.length, 5, `checks run: ${outcomes[0].checks.join(", ")}`);
});
