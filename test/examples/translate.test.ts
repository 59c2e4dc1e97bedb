// Smoke test of examples/translate.ts: number words English → Spanish, one process, then two ranks
// resuming its checkpoint.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { expectOk, runExample, valuesAfter, workDir } from "./smoke.js";

const en = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const es = ["uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez"];
const pairs = Array.from({ length: 120 }, (_, i) => {
  const [a, b] = [i % 10, (i * 3 + 1) % 10];
  return `${en[a]} ${en[b]}\t${es[a]} ${es[b]}`;
});

test("translate trains, validates with BLEU and CER, checkpoints and resumes on 2 ranks", async (t) => {
  const dir = workDir(t, { "pairs.tsv": `${pairs.join("\n")}\n` });
  const common = ["--data", join(dir, "pairs.tsv"), "--runs-dir", dir, "--d-model", "32", "--heads", "2", "--layers", "1", "--ff", "64", "--batch-size", "16", "--ckpt-freq", "4", "--log-freq", "2", "--val-size", "8", "--samples", "1"];
  const one = await runExample("examples/translate.ts", [...common, "--epochs", "1"], 1);
  expectOk(one, "1 rank");
  assert.match(one.out, /source: +\w+ \w+\n +target: +\w+ \w+\n +predicted:/);
  const bleu = valuesAfter(one.out, "validation BLEU");
  assert.ok(bleu.length >= 1 && bleu.every((b) => b >= 0 && b <= 100), one.out);
  assert.ok(valuesAfter(one.out, "CER").every((c) => c >= 0));
  const two = await runExample("examples/translate.ts", [...common, "--epochs", "2", "--resume", "latest"], 2);
  expectOk(two, "2 ranks");
  assert.match(two.out, /resumed from .* at step 7/);
  assert.match(two.out, /2 rank\(s\)/);
  assert.ok(valuesAfter(two.out, "validation BLEU").length >= 1, two.out);
});
