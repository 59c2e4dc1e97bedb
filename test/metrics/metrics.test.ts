// Metrics against scikit-learn, sacrebleu and rapidfuzz (tools/text/make_metric_fixtures.py), and
// on 2-4 ranks against the one-process values: exactly equal, since only integer counts travel.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { metrics, tensor } from "../../src/index.js";
import { explain, launch } from "../distributed/harness.js";
import { EXPECTED, computeAll } from "./common.js";

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

describe("metrics in one process", () => {
  const got = computeAll(() => true);
  it("accuracy, precision, recall and F1 (binary, macro, micro) equal scikit-learn's", () => {
    EXPECTED.classification.forEach((c: Record<string, Record<string, number> | number>, i: number) => {
      close(got.cls[i].accuracy as number, c.accuracy as number, `case ${i} accuracy`);
      for (const avg of ["macro", "micro", "binary"]) {
        if (c[avg] === undefined) continue;
        for (const k of ["precision", "recall", "f1"]) close((got.cls[i][avg] as Record<string, number>)[k], (c[avg] as Record<string, number>)[k], `case ${i} ${avg} ${k}`);
      }
    });
  });
  it("corpus BLEU equals sacrebleu's, with one and two references", () => {
    for (const k of ["single", "multi"] as const) {
      const e = EXPECTED.bleu[k];
      close(got[k].score, e.score, `${k} score`);
      assert.equal(got[k].sysLen, e.sysLen);
      assert.equal(got[k].refLen, e.refLen);
      got[k].precisions.forEach((p: number, n: number) => close(p, e.precisions[n], `${k} precision ${n + 1}`));
    }
    const short = new metrics.BLEU().update(["the cat", "on mat"], ["the cat sat on the mat", "there is a cat on the mat"]).compute();
    close(short.bp, EXPECTED.bleu.short.bp, "brevity penalty");
    close(short.score, EXPECTED.bleu.short.score, "short score");
    EXPECTED.bleu.tokenizedInputs.forEach((s: string, i: number) => assert.equal(metrics.tokenize13a(s), EXPECTED.bleu.tokenized[i], JSON.stringify(s)));
  });
  it("WER and CER equal rapidfuzz's Levenshtein over words and characters", () => {
    close(got.wer, EXPECTED.wer, "WER");
    close(got.cer, EXPECTED.cer, "CER");
  });
  it("takes logits tensors (argmax) and rejects mismatched or out-of-range labels", () => {
    const logits = tensor([[0.1, 0.9], [2, -1], [0.3, 0.4]]);
    assert.equal(new metrics.Accuracy().update(logits, [1, 0, 0]).compute(), 2 / 3);
    assert.throws(() => new metrics.Accuracy().update([1, 0], [1]), /2 predictions but 1 targets/);
    assert.throws(() => new metrics.PrecisionRecallF1({ numClasses: 2 }).update([2], [1]), /label 2 at position 0 is outside 0\.\.1/);
    assert.throws(() => new metrics.PrecisionRecallF1({ numClasses: 3 }), /average "binary" needs 2 classes/);
  });
});

describe("metrics across ranks", () => {
  const one = computeAll(() => true);
  // An even and an odd world size (shares of 4 ranks add nothing that 2 and 3 do not check).
  for (const world of [2, 3]) {
    it(`${world} ranks, each with its share, give exactly the one-process values`, async () => {
      const results = await launch({ world, script: fileURLToPath(new URL("./workers/metrics_rank.ts", import.meta.url)), timeoutMs: 90_000 });
      for (const r of results) assert.equal(r.code, 0, explain(results));
      for (const r of results) assert.deepEqual(r.result, JSON.parse(JSON.stringify(one)));
    });
  }
});
