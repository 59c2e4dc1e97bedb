import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WORKER = "test/checkpoint/workers/fault_train.ts";

interface Final {
  step: number;
  resumedFrom: number;
  params: string[];
}

/** Runs the 2-rank job under ringrun with up to 3 restarts; returns the final parameters and the console. */
function runJob(env: Record<string, string>, nproc = 2, shared?: string): { final: Final; output: string } {
  const dir = shared ?? mkdtempSync(join(tmpdir(), "ringtorch-fault-"));
  try {
    const out = join(dir, "final.json");
    const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", String(nproc), "--max-restarts", "3", "--monitor-interval", "0.1", WORKER], {
      cwd: ROOT,
      env: { ...process.env, CKPT_DIR: join(dir, "ckpt"), OUT: out, RINGTORCH_NUM_THREADS: "1", ...env },
      timeout: 120_000,
      encoding: "utf8",
    });
    const output = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.status, 0, `the job failed:\n${output}`);
    return { final: JSON.parse(readFileSync(out, "utf8")) as Final, output };
  } finally {
    if (!shared) rmSync(dir, { recursive: true, force: true });
  }
}

let reference: Final;

test("an uninterrupted run gives the reference parameters", () => {
  reference = runJob({}).final;
  assert.equal(reference.step, 12);
  assert.equal(reference.resumedFrom, 0);
});

test("a rank killed with SIGKILL mid-epoch: the job restarts, resumes and ends bit-identical", () => {
  const { final, output } = runJob({ FAULT: "kill", FAULT_STEP: "7", FAULT_RANK: "1" });
  assert.match(output, /restart/i);
  assert.equal(final.resumedFrom, 5);
  assert.deepEqual(final.params, reference.params);
});

test("a crash in the middle of writing a checkpoint: the partial one is skipped, the result is bit-identical", () => {
  const { final, output } = runJob({ FAULT: "mid-save", FAULT_STEP: "10", FAULT_RANK: "0" });
  assert.match(output, /skipping .*step_00000010.*no metadata\.json/);
  assert.equal(final.resumedFrom, 5);
  assert.deepEqual(final.params, reference.params);
});

test("a rank killed while an asynchronous save is being written: the result is bit-identical", () => {
  const { final } = runJob({ FAULT: "kill-async", FAULT_STEP: "9", ASYNC_SAVE: "1" });
  assert.ok(final.resumedFrom === 5 || final.resumedFrom === 10, `resumed from ${final.resumedFrom}`);
  assert.deepEqual(final.params, reference.params);
});

test("replicated state resumes at another world size: 2 ranks → 1 → 3", () => {
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-resize-"));
  try {
    const a = runJob({ EPOCHS: "1", SAVE_EVERY: "3" }, 2, dir).final;
    assert.equal(a.step, 6);
    // One rank continues: epoch 0 is done (6 batches × 2 ranks = 12 of its batches), epoch 1 has 12.
    const b = runJob({ EPOCHS: "2", SAVE_EVERY: "3" }, 1, dir).final;
    assert.deepEqual([b.resumedFrom, b.step], [6, 18]);
    // Three ranks continue with epoch 2: 4 batches each.
    const c = runJob({ EPOCHS: "3", SAVE_EVERY: "3" }, 3, dir).final;
    assert.deepEqual([c.resumedFrom, c.step], [18, 22]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
