// `if (rank === 0) await checkpoint.save(...); dist.barrier()` (torch.save on rank 0) under DDP
// on 2 and 3 ranks: it completes, training goes on with identical replicas, and the checkpoint
// holds rank 0's weights at the save.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const WORKER = fileURLToPath(new URL("./workers/rank0_save.ts", import.meta.url));

for (const world of [2, 3]) {
  test(`a rank-0-only save between DDP steps works on ${world} ranks`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "rank0-save-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const results = await launch({ world, script: WORKER, env: { CKPT_DIR: dir }, timeoutMs: 90_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const out = results.map((r) => r.result as { resumedStep: number; resumedWeight: number[]; savedWeight: number[]; newestAfterSave: number; sums: number[] });
    const saved = out[0].savedWeight;
    assert.equal(saved.length, 32);
    for (const o of out) {
      assert.equal(o.resumedStep, 1);
      assert.deepEqual(o.resumedWeight, saved, "the checkpoint holds rank 0's weights at the save");
      assert.equal(o.newestAfterSave, 2, "an every-rank save returns on every rank only once rank 0's checkpoint is complete");
      assert.ok(o.sums.every((s) => s === o.sums[0]), `replicas differ after the save: ${o.sums.join(", ")}`);
    }
  });
}
