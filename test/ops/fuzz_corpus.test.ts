// Replays the committed differential-fuzz corpus (test/fixtures/fuzz/corpus.json, written by
// tools/fuzz/gen_cases.py with PyTorch 2.13): values, gradients, dtypes, shapes and errors must agree.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { describeCase, replayCase, type FuzzCase } from "../../tools/fuzz/replay_case.js";

const { cases } = JSON.parse(readFileSync(new URL("../fixtures/fuzz/corpus.json", import.meta.url), "utf8")) as { cases: FuzzCase[] };

const byOp = new Map<string, FuzzCase[]>();
for (const c of cases) {
  const list = byOp.get(c.op) ?? [];
  list.push(c);
  byOp.set(c.op, list);
}

describe("differential fuzz corpus against PyTorch", () => {
  test("the corpus covers many ops, errors and gradients", () => {
    assert.ok(byOp.size >= 70, `only ${byOp.size} ops in the corpus`);
    assert.ok(cases.filter((c) => c.error !== undefined).length > 100, "too few cases where PyTorch raises");
    assert.ok(cases.filter((c) => c.grads !== undefined).length > 500, "too few cases with gradients");
  });
  for (const [op, list] of [...byOp].sort()) {
    test(`${op}: ${list.length} cases agree`, () => {
      const failures = list.flatMap((c) => {
        const d = replayCase(c);
        return d ? [`${d.kind}: ${describeCase(c)} seed=${c.seed}: ${d.detail}`] : [];
      });
      assert.deepEqual(failures, []);
    });
  }
});
