import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explain, launch } from "./harness.js";
import { gpipeOrder, idealBubbleFraction, oneFOneBOrder, peakInFlight } from "../../src/distributed/pipelining/schedule_orders.js";

interface Report {
  failures: string[];
  cases: number;
  errors: Record<string, string | null>;
}

describe("pipeline schedules (no processes)", () => {
  it("GPipe and 1F1B have the bubble (p-1)/(m+p-1) with unit-time actions", () => {
    for (const order of [gpipeOrder, oneFOneBOrder]) {
      for (let p = 1; p <= 4; p++) {
        for (let m = 1; m <= 9; m++) assert.ok(Math.abs(idealBubbleFraction(order, p, m) - (p - 1) / (m + p - 1)) < 1e-12, `${order.name} p=${p} m=${m}`);
      }
    }
  });

  it("every micro-batch runs forward then backward once; 1F1B keeps at most p-s alive, GPipe m", () => {
    for (let p = 1; p <= 4; p++) {
      for (let m = 1; m <= 9; m++) {
        for (let s = 0; s < p; s++) {
          for (const order of [gpipeOrder(s, p, m), oneFOneBOrder(s, p, m)]) {
            for (let mb = 0; mb < m; mb++) {
              const f = order.findIndex((a) => a.kind === "F" && a.mb === mb);
              const b = order.findIndex((a) => a.kind === "B" && a.mb === mb);
              assert.ok(f >= 0 && b > f && order.filter((a) => a.mb === mb).length === 2);
            }
          }
          assert.equal(peakInFlight(gpipeOrder(s, p, m)), m);
          assert.equal(peakInFlight(oneFOneBOrder(s, p, m)), Math.min(p - s, m));
        }
      }
    }
  });
});

/**
 * One launch of 4 ranks runs every case (workers/pipeline.ts): model parallelism by hand through
 * autograd send/recv, 3- and 2-stage pipelines with GPipe and 1F1B over micro-batch counts that do
 * not divide the batch, 2 stages x 2 data-parallel replicas, each checked against the unsplit
 * model on one process; then bad input.
 */
describe("pipeline parallelism against the unsplit model", () => {
  it("outputs, summed loss and every parameter's gradient within 1e-5 (also PP x DP on 4 ranks); bad input named", async () => {
    const results = await launch({ world: 4, script: "pipeline.ts", timeoutMs: 180_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const reports = results.map((r) => r.result as Report);
    reports.forEach((rep, rank) => {
      assert.deepEqual(rep.failures, [], `rank ${rank}`);
      // Rank 3 takes part in the PP x DP cases only.
      assert.ok(rep.cases >= (rank === 3 ? 10 : 20), `rank ${rank} checked only ${rep.cases} values`);
      assert.match(rep.errors.missingSplit!, /split point "9" is not a child of the model; its children are 0, 1, 2, 3, 4, 5, 6/);
    });
    assert.match(reports[0]!.errors.tooManyMicrobatches!, /5 micro-batches need at least 5 samples, but the input batch has 4/);
    assert.match(reports[1]!.errors.tooManyMicrobatches!, /5 micro-batches need at least 5 samples, but the target batch has 4/);
    for (const rank of [0, 1]) {
      assert.equal(
        reports[rank]!.errors.shapeMismatch,
        "pipeline: the activations from stage 0 (rank 0) to stage 1 (rank 1) disagree: rank 0 sends [4, 8] (per sample [8]), rank 1 takes per sample [16]",
      );
    }
  });
});
