import assert from "node:assert/strict";
import { test } from "node:test";
import { checkArity, checkOptions, closestKey } from "../../src/util/options.js";

test("a PyTorch snake_case key is refused, naming the camelCase key", () => {
  assert.throws(() => checkOptions("CrossEntropyLoss", { ignore_index: 0 }, ["ignoreIndex", "labelSmoothing", "reduction"]), /unknown option "ignore_index"; did you mean ignoreIndex\?/);
  assert.throws(() => checkOptions("DDP", { bucket_cap_mb: 25 }, ["bucketCapMb", "broadcastBuffers"]), /did you mean bucketCapMb\?/);
});

test("a typo is matched by edit distance; a far-off key lists the known ones", () => {
  assert.equal(closestKey("labelSmothing", ["ignoreIndex", "labelSmoothing"]), "labelSmoothing");
  assert.equal(closestKey("momentum", ["lr", "betas"]), undefined);
  assert.throws(() => checkOptions("Adam", { momentum: 0.9 }, ["lr", "betas"]), /unknown option "momentum"; known options: lr, betas/);
  assert.throws(() => checkOptions("ReLU", { inplace: true }, []), /it takes no options/);
});

test("known keys, undefined and null pass; a non-object is refused", () => {
  checkOptions("x", { lr: 1 }, ["lr"]);
  checkOptions("x", undefined, ["lr"]);
  checkOptions("x", null, ["lr"]);
  assert.throws(() => checkOptions("StepLR", 0.5, ["stepSize", "gamma"]), /options must be an object such as \{ stepSize, gamma \}, got number 0.5/);
  assert.throws(() => checkOptions("x", [1], ["lr"]), /got an array/);
});

test("stray positional arguments are refused with the right call shape", () => {
  checkArity("StepLR", [1, 2], 2, "new StepLR(optimizer, { stepSize, gamma })");
  assert.throws(() => checkArity("StepLR", [1, 10, 0.5], 2, "new StepLR(optimizer, { stepSize, gamma })"), /too many arguments \(3, at most 2\); the extra number 0.5 would be ignored/);
});
