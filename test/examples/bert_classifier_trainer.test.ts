// Smoke test of examples/bert_classifier_trainer.ts, the script unchanged under ringrun on two
// ranks: a tiny BERT on the committed sample of the fortune files, evaluated and saved each epoch,
// the best checkpoint by F1 restored and kept in HF format. (One process, and the equality of
// its steps with the hand loop's: test/trainer/bert_loops.test.ts.)
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { models } from "../../src/index.js";
import { expectOk, repoRoot, runExample, workDir } from "./smoke.js";

test("bert_classifier_trainer runs under ringrun on 2 ranks with no distributed code, and keeps the best model", async (t) => {
  const dir = workDir(t, {});
  const data = join(repoRoot, "test/trainer/fixtures/fortunes_small.jsonl");
  const args = ["--data", data, "--runs-dir", dir, "--hidden", "16", "--layers", "1", "--heads", "2", "--vocab-size", "150", "--max-length", "24", "--batch-size", "8", "--epochs", "2", "--warmup", "1", "--lr", "1e-3", "--log-freq", "2"];
  const r = await runExample("examples/bert_classifier_trainer.ts", args, 2);
  expectOk(r, "2 ranks");
  assert.match(r.out, /64 training \/ 16 test records, vocab \d+, 2 rank\(s\)/);
  // 32 records a rank in batches of 8: 4 steps an epoch; each evaluation scores all 16 test records once.
  assert.equal([...r.out.matchAll(/epoch \d \| test accuracy [0-9.]+ \| F1 [0-9.]+ .* on 16 records/g)].length, 2, r.out);
  assert.match(r.out, /trained 8 steps/);
  const trainerDir = join(dir, "bert-classifier", "trainer");
  assert.deepEqual(readdirSync(trainerDir).filter((d) => d.startsWith("step_")).sort(), ["step_00000004", "step_00000008"]);
  const best = join(dir, "bert-classifier", "best");
  assert.ok(existsSync(join(best, "tokenizer.json")), r.out);
  assert.equal(models.BertForSequenceClassification.fromPretrained(best).bert.settings.numHiddenLayers, 1);
});
