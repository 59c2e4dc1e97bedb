// DDP composed with bfloat16 mixed precision (autocast, bf16CompressHook, bf16 parameters with
// float32 master weights) against one process on the whole batch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const WORKER = fileURLToPath(new URL("./workers/ddp_bf16.ts", import.meta.url));

test("DDP on 2 ranks under autocast takes the steps of one process, with bf16 gradients and bf16 parameters", async () => {
  const results = await launch({ world: 2, script: WORKER, timeoutMs: 120_000, env: { RINGTORCH_NUM_THREADS: "1" } });
  for (const r of results) assert.equal(r.code, 0, explain(results));
  const outcomes = results.map((r) => r.result as { failures: string[]; checks: string[] });
  assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
  assert.deepEqual(outcomes[0].checks, ["autocast + bf16CompressHook", "bf16 parameters with master weights"]);
});
