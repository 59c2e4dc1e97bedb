// Smoke test of examples/bert_classifier.ts: a tiny BERT on generated sentiment-like sentences, one
// process, then two ranks resuming its checkpoint; the best model is kept in HF format.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { models } from "../../src/index.js";
import { expectOk, runExample, valuesAfter, workDir } from "./smoke.js";

const good = ["great", "wonderful", "happy", "excellent", "lovely"];
const bad = ["awful", "terrible", "sad", "horrible", "bad"];
const filler = ["the", "movie", "was", "really", "quite", "a", "day"];
const rows = Array.from({ length: 100 }, (_, i) => {
  const label = i % 2;
  const word = (label ? good : bad)[(i * 3) % 5];
  return JSON.stringify({ text: `${filler[i % 7]} ${filler[(i + 2) % 7]} ${word} ${filler[(i + 4) % 7]}`, label });
});

test("bert_classifier trains, scores accuracy and F1 over ranks, keeps the best model, resumes on 2 ranks", async (t) => {
  const dir = workDir(t, { "sent.jsonl": `${rows.join("\n")}\n` });
  const common = ["--data", join(dir, "sent.jsonl"), "--runs-dir", dir, "--hidden", "32", "--layers", "1", "--heads", "2", "--batch-size", "16", "--vocab-size", "100", "--max-length", "16", "--ckpt-freq", "3", "--log-freq", "2", "--warmup", "1", "--lr", "1e-3"];
  const one = await runExample("examples/bert_classifier.ts", [...common, "--epochs", "1"], 1);
  expectOk(one, "1 rank");
  const acc = valuesAfter(one.out, "epoch 0 \\| test accuracy");
  assert.equal(acc.length, 1, one.out);
  assert.ok(acc[0] >= 0 && acc[0] <= 1);
  assert.match(one.out, /on 20 records/);
  // The generated task is separable by one word: the naive-Bayes baseline gets it all right.
  assert.match(one.out, /naive-Bayes baseline .* test accuracy 1\.0000 \| F1 1\.0000/);
  const best = join(dir, "bert-classifier", "best");
  assert.ok(existsSync(join(best, "model.safetensors")) && existsSync(join(best, "tokenizer.json")), one.out);
  assert.equal(models.BertForSequenceClassification.fromPretrained(best).bert.settings.numHiddenLayers, 1);
  const two = await runExample("examples/bert_classifier.ts", [...common, "--epochs", "2", "--resume", "latest"], 2);
  expectOk(two, "2 ranks");
  assert.match(two.out, /resumed from .* at step 5/);
  // The evaluation sampler gives each test record to exactly one rank: still 20 records in all.
  assert.match(two.out, /epoch 1 \| test accuracy [0-9.]+ \| F1 [0-9.]+ .* on 20 records/);
});
