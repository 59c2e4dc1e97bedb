import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";
import { assertClose } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./workers/fsdp_trainer.ts", import.meta.url));

interface Run {
  losses: number[];
  gradNorms: number[];
  evalLosses: number[];
  weights: number[];
}

test("on 2 ranks every fsdp option trains as the DDP Trainer, and a sharded checkpoint resumes bit-identically", async () => {
  const out = mkdtempSync(join(tmpdir(), "ringtorch-trainer-fsdp-"));
  try {
    const results = await launch({ world: 2, script: WORKER, env: { TRAINER_OUT: out }, timeoutMs: 120_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const r of results) {
      const o = r.result as { rank: number; ddp: Run; strategies: Record<string, Run>; lastEpoch: Run; straight: Run; resumed: Run };
      assert.equal(o.ddp.losses.length, 8, "16 samples a rank, micro-batches of 2, 2 accumulated, 2 epochs");
      assert.equal(o.ddp.evalLosses.length, 2);
      assert.deepEqual(Object.keys(o.strategies), ["full_shard", "shard_grad_op", "no_shard", "hybrid_shard"]);
      for (const [name, s] of Object.entries(o.strategies)) {
        // The same sums reach each shard in another order (reduce-scatter against all-reduce): equal to rounding.
        assertClose(s.losses, o.ddp.losses, 1e-5, 1e-5, `rank ${o.rank} ${name} losses`);
        assertClose(s.gradNorms, o.ddp.gradNorms, 1e-5, 1e-5, `rank ${o.rank} ${name} gradient norms`);
        assertClose(s.evalLosses, o.ddp.evalLosses, 1e-5, 1e-5, `rank ${o.rank} ${name} eval losses (13 samples, uneven shares)`);
        assertClose(s.weights, o.ddp.weights, 1e-5, 1e-4, `rank ${o.rank} ${name} final weights (the best checkpoint's, loaded back)`);
      }
      assert.deepEqual(o.lastEpoch.losses, o.strategies.full_shard.losses, "saving changes nothing");
      assert.notDeepEqual(o.lastEpoch.weights, o.strategies.full_shard.weights, "the first epoch's checkpoint was loaded back, not the last weights kept");
      assert.deepEqual(o.straight.weights, o.lastEpoch.weights, "saving every 3 steps changes nothing");
      assert.deepEqual(o.resumed.weights, o.straight.weights, `rank ${o.rank}: resumed from step 3 ends bit-identical`);
      // The log history comes back with the checkpoint; the steps after it are taken again, each once.
      assert.deepEqual(o.resumed.losses, o.straight.losses, "the resumed log history");
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
