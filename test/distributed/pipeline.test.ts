import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explain, launch } from "./harness.js";
import { readFileSync } from "node:fs";
import { gpipeOrder, idealBubbleFraction, interleavedOneFOneBOrder, oneFOneBOrder, peakInFlight } from "../../src/distributed/pipelining/schedule_orders.js";

/** PyTorch's ScheduleInterleaved1F1B orders per rank (tools/gen_pipeline_orders.py), e.g. "0F0 2F0 2B0 0B0". */
const torchInterleaved = JSON.parse(readFileSync(new URL("./fixtures/interleaved_orders.json", import.meta.url), "utf8")) as {
  cases: { p: number; v: number; m: number; orders: string[] }[];
};

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

describe("interleaved 1F1B order (no processes)", () => {
  it("is PyTorch's order on every rank (2-4 ranks, 2-3 stages each, 1 to 2p+2 micro-batches)", () => {
    assert.ok(torchInterleaved.cases.length >= 30);
    for (const { p, v, m, orders } of torchInterleaved.cases) {
      orders.forEach((want, rank) => {
        const got = interleavedOneFOneBOrder(rank, p, m, v).map((a) => `${a.stage}${a.kind}${a.mb}`).join(" ");
        assert.equal(got, want, `p=${p} v=${v} m=${m} rank ${rank}`);
      });
    }
  });

  it("has the bubble (p-1)/(v*m+p-1) where the micro-batches fill whole rounds, below 1F1B's", () => {
    for (const { p, v, m } of torchInterleaved.cases) {
      const bubble = idealBubbleFraction((r, pp, mm) => interleavedOneFOneBOrder(r, pp, mm, v), p, m, v);
      if (m % p === 0) assert.ok(Math.abs(bubble - (p - 1) / (v * m + p - 1)) < 1e-12, `p=${p} v=${v} m=${m}: ${bubble}`);
      assert.ok(bubble < idealBubbleFraction(oneFOneBOrder, p, m) + 1e-12, `p=${p} v=${v} m=${m}`);
    }
  });
});

/**
 * One launch of 4 ranks runs every case (workers/pipeline.ts): model parallelism by hand through
 * autograd send/recv, 3- and 2-stage pipelines with GPipe and 1F1B over micro-batch counts that do
 * not divide the batch, interleaved 1F1B with 2 stages on each of 2 and 3 ranks, 2 stages x 2
 * data-parallel replicas through DDP, each checked against the unsplit model on one process; then
 * bad input.
 */
describe("pipeline parallelism against the unsplit model", () => {
  it("outputs, summed loss and every parameter's gradient within 1e-5 (also PP x DP on 4 ranks); bad input named", async () => {
    const results = await launch({ world: 4, script: "pipeline.ts", timeoutMs: 180_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const reports = results.map((r) => r.result as Report);
    reports.forEach((rep, rank) => {
      assert.deepEqual(rep.failures, [], `rank ${rank}`);
      // Rank 3 takes part in the PP x DP cases only.
      assert.ok(rep.cases >= (rank === 3 ? 10 : 30), `rank ${rank} checked only ${rep.cases} values`);
      assert.match(rep.errors.missingSplit!, /split point "9" is not a child of the model; its children are 0, 1, 2, 3, 4, 5, 6/);
    });
    for (const rank of [0, 1]) {
      assert.match(reports[rank]!.errors.interleavedRounds!, /5 micro-batches on 2 ranks run in 2 rounds, so the number of micro-batches must be a multiple of 2/);
      assert.match(reports[rank]!.errors.interleavedStages!, new RegExp(`group rank ${rank} of 2 must hold the stages ${rank}, ${rank + 2} of the 4-stage pipeline`));
    }
    for (const rank of [0, 1]) assert.match(reports[rank]!.errors.inputGradientFirst!, /Schedule1F1B: inputGradientFirst must be true or false, got "yes"/);
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
