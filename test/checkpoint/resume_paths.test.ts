// checkpoint.resume resolves what the porter wrote: the root, one step directory (note 000's
// preload = "3"), { step: 3 } and "latest"; a wrong path is an error, never a silent fresh start.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as rt from "../../src/index.js";

const { nn, checkpoint } = rt;
let root: string;

function model(fill: number): rt.nn.Linear {
  const m = new nn.Linear(2, 1);
  rt.noGrad(() => {
    m.weight.fill_(fill);
    m.bias!.fill_(fill);
  });
  return m;
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), "resume-paths-"));
  for (const step of [1, 3, 5]) await checkpoint.save(join(root, "ckpt"), { model: model(step), epoch: step * 10 }, { step });
});
after(() => rmSync(root, { recursive: true, force: true }));

const weightOf = (m: rt.nn.Linear) => m.weight.data()[0];

describe("checkpoint.resume paths", () => {
  it("the root resumes the newest; { step: 3 } and { step: \"latest\" } choose", async () => {
    const m = model(0);
    assert.equal((await checkpoint.resume(join(root, "ckpt"), { model: m })).step, 5);
    assert.equal(weightOf(m), 5);
    const s3 = await checkpoint.resume(join(root, "ckpt"), { model: m, step: 3 });
    assert.deepEqual([s3.step, s3.epoch, weightOf(m)], [3, 30, 3]);
    assert.equal((await checkpoint.resume(join(root, "ckpt"), { model: m, step: "latest" })).step, 5);
  });

  it("a step directory resumes that step, by its own name or as root/3", async () => {
    const m = model(0);
    assert.equal((await checkpoint.resume(join(root, "ckpt", "step_00000003"), { model: m })).step, 3);
    assert.equal(weightOf(m), 3);
    assert.equal((await checkpoint.resume(join(root, "ckpt", "1"), { model: m })).step, 1);
    assert.equal(weightOf(m), 1);
  });

  it("a wrong path or a missing step is an error that says what exists", async () => {
    await assert.rejects(checkpoint.resume(join(root, "ckpt"), { step: 4 }), /has no checkpoint of step 4; it has step\(s\) 1, 3, 5/);
    await assert.rejects(checkpoint.resume(join(root, "ckpt", "4")), /has no checkpoint of step 4/);
    await assert.rejects(checkpoint.resume(join(root, "ckpt-typo"), { step: "latest" }), /ckpt-typo does not exist/);
    await assert.rejects(checkpoint.resume(join(root, "ckpt-typo"), { step: 3 }), /does not exist, so there is no checkpoint of step 3/);
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    await assert.rejects(checkpoint.resume(file), /is a file/);
    await assert.rejects(checkpoint.resume(join(root, "ckpt", "step_00000003"), { step: 5 }), /already one checkpoint/);
  });

  it("a root with no checkpoint yet starts fresh, saying where it looked; with step: \"latest\" that is an error", async () => {
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (msg: string) => warnings.push(msg);
    try {
      const start = await checkpoint.resume(join(root, "not-yet"));
      assert.deepEqual([start.path, start.step], [null, 0]);
    } finally {
      console.warn = warn;
    }
    assert.match(warnings.join("\n"), /no checkpoint at .*not-yet \(it does not exist yet\); starting from step 0/);
    await assert.rejects(checkpoint.resume(root, { step: "latest" }), /holds no checkpoints/);
  });
});
