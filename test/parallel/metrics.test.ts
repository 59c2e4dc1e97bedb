import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const WORKER = fileURLToPath(new URL("./workers/eval_metrics.ts", import.meta.url));

test("distributed evaluation over 3 ranks equals the one-process accuracy and loss exactly; rank0First orders work", async () => {
  const results = await launch({ world: 3, script: WORKER, timeoutMs: 60_000 });
  for (const r of results) assert.equal(r.code, 0, explain(results));
  for (const r of results) {
    const o = r.result as { acc: { correct: number; total: number }; single: { correct: number }; meanLoss: number; singleMeanLoss: number; paddedTotal: number; seen: boolean; othersDone: boolean };
    assert.equal(o.acc.total, 13);
    assert.equal(o.acc.correct, o.single.correct);
    assert.ok(Math.abs(o.meanLoss - o.singleMeanLoss) < 1e-6, `mean loss ${o.meanLoss} vs ${o.singleMeanLoss}`);
    assert.equal(o.paddedTotal, 15, "a padding sampler gives 15 samples for 13 over 3 ranks");
    assert.equal(o.seen, true, "every rank saw rank 0's prepared file");
    assert.equal(o.othersDone, true, "rank0First returned on rank 0 only after every rank had finished fn");
  }
});
