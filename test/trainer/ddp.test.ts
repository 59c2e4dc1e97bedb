import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";
import { assertClose } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./workers/ddp_trainer.ts", import.meta.url));

test("on 3 ranks the Trainer takes the one-process steps of the global batch, and evaluates every sample once", async () => {
  const out = mkdtempSync(join(tmpdir(), "ringtorch-trainer-ddp-"));
  try {
    const results = await launch({ world: 3, script: WORKER, env: { TRAINER_OUT: out }, timeoutMs: 90_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const r of results) {
      const o = r.result as Record<string, unknown> & { losses: number[]; handLosses: number[]; maxWeightDiff: number; testLoss: number; singleLoss: number };
      assert.equal(o.world, 3);
      assert.equal(o.losses.length, 8, "16 samples a rank, batches of 4, 2 epochs");
      assertClose(o.losses, o.handLosses, 1e-5, 1e-4, `rank ${o.rank} losses`);
      assert.ok(o.maxWeightDiff < 1e-4, `rank ${o.rank}: weights differ from the one-process loop by ${o.maxWeightDiff}`);
      // Logits of each sample come from the same model on one rank, so the gather must bring every
      // sample back once and in order; they match to rounding only, because a rank's eval batch has
      // other rows than the one-process batch and the GEMM sums a few-row batch in another order.
      assertClose(o.predictions as number[], o.singlePredictions, 1e-6, 1e-6, `rank ${o.rank} predictions`);
      assert.equal(o.testAccuracy, o.singleAccuracy);
      assertClose(o.testLoss, o.singleLoss, 1e-6, 1e-6, "test loss");
    }
    assert.deepEqual(readdirSync(out).filter((d) => d.startsWith("step_")).sort(), ["step_00000004", "step_00000008"]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
