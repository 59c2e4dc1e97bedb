import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const OFFLOAD = fileURLToPath(new URL("./workers/fsdp_offload.ts", import.meta.url));

interface Outcome {
  failures: string[];
  checks: string[];
}

test("FSDP offload to memory-mapped files takes the in-memory run's steps bit for bit, outside the pool, and its files go at exit; FULL_SHARD trains under a per-rank cap that DDP's state exceeds", async () => {
  // Under the working directory (a disk), not tmpdir(), which may be tmpfs.
  const dir = mkdtempSync(join(process.cwd(), ".fsdp-offload-"));
  try {
    const results = await launch({ world: 2, script: OFFLOAD, timeoutMs: 240_000, env: { RINGTORCH_NUM_THREADS: "1", DIR: dir } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const outcomes = results.map((r) => r.result as Outcome);
    assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
    assert.deepEqual(outcomes[0].checks, [
      "offload parity, SGD momentum",
      "offload parity, AdamW, clipGradNorm",
      "offloaded bytes outside the pool",
      "offload errors",
      "trains under a cap DDP's state exceeds",
    ]);
    assert.deepEqual(readdirSync(dir), [], "offload files left after the ranks exited");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
