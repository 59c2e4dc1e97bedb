// Smoke test of examples/gpt_instruct.ts: a tiny GPT-2 on generated Alpaca records, one process,
// then two ranks resuming its checkpoint.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { expectOk, runExample, valuesAfter, workDir } from "./smoke.js";

const adjectives = ["red", "blue", "green", "small", "large", "quick", "slow", "bright", "dark", "soft"];
const nouns = ["cat", "tree", "river", "stone", "bird", "cloud", "house", "road", "fish", "star"];
const records = Array.from({ length: 80 }, (_, i) => {
  const a = adjectives[i % 10];
  const n = nouns[(i * 7) % 10];
  return JSON.stringify({ instruction: `Describe the ${a} ${n}.`, input: "", output: `The ${n} is ${a}.` });
});

test("gpt_instruct trains, validates, checkpoints, resumes on 2 ranks and generates", async (t) => {
  const dir = workDir(t, { "tiny.jsonl": `${records.join("\n")}\n` });
  const common = ["--data", join(dir, "tiny.jsonl"), "--runs-dir", dir, "--n-layer", "1", "--n-embd", "32", "--n-head", "2", "--seq-length", "128", "--batch-size", "4", "--vocab-size", "300", "--val-records", "8", "--ckpt-freq", "2", "--log-freq", "2", "--warmup", "1", "--samples", "1"];
  const one = await runExample("examples/gpt_instruct.ts", [...common, "--steps", "2", "--grad-accum", "2"], 1);
  expectOk(one, "1 rank");
  const val1 = valuesAfter(one.out, "validation loss");
  assert.equal(val1.length, 1);
  assert.ok(Number.isFinite(val1[0]) && val1[0] > 0, one.out);
  assert.match(one.out, /--- sample[\s\S]*generated:[\s\S]*reference: The \w+ is \w+\./);
  assert.ok(existsSync(join(dir, "gpt-instruct", "checkpoints")));
  const two = await runExample("examples/gpt_instruct.ts", [...common, "--steps", "4", "--resume", "latest"], 2);
  expectOk(two, "2 ranks");
  assert.match(two.out, /resumed from .*step_0+2 at step 2/);
  assert.match(two.out, /2 rank\(s\)/);
  assert.equal(valuesAfter(two.out, "validation loss").length, 1, two.out);
  assert.match(two.out, /step 4 \| loss [0-9.]+/);
});
