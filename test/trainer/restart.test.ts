import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const WORKER = "test/trainer/workers/restart_trainer.ts";

/** Runs the training script under ringrun on 2 ranks; returns ringrun's output. */
function ringrun(dir: string, extra: Record<string, string>): string {
  const env: NodeJS.ProcessEnv = { ...process.env, TRAINER_OUT: join(dir, "out"), WEIGHTS_OUT: join(dir, "weights.json"), RINGTORCH_QUIET: "1", ...extra };
  for (const k of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_RUN_ID", "RINGTORCH_RESTART_COUNT", "TORCHELASTIC_RESTART_COUNT"]) delete env[k];
  const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "--max-restarts", "1", "--monitor-interval", "0.1", WORKER], { env, encoding: "utf8", timeout: 180_000 });
  assert.equal(r.status, 0, `ringrun failed:\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}\n${r.stderr}`;
}

/** The records of the one tracking run under outputDir/runs (rank 0 logs, in mode "rank0"). */
function metricRows(dir: string): Record<string, number>[] {
  const runs = join(dir, "out", "runs", "rank-0");
  return readFileSync(join(runs, "metrics.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
}

test("a rank SIGKILLed mid-epoch under ringrun --max-restarts 1: the Trainer resumes and ends bit-identical, each step logged once", () => {
  const straight = mkdtempSync(join(tmpdir(), "ringtorch-trainer-straight-"));
  const killed = mkdtempSync(join(tmpdir(), "ringtorch-trainer-killed-"));
  try {
    ringrun(straight, {});
    const marker = join(killed, "killed");
    // 24 samples a rank in batches of 4: 6 steps an epoch; step 10 is mid-epoch, 2 steps past the checkpoint of step 8.
    ringrun(killed, { KILL_AT_STEP: "10", KILL_MARKER: marker });
    assert.ok(existsSync(marker), "rank 1 killed itself on the first attempt");
    const info = JSON.parse(readFileSync(join(killed, "out", "runs", "rank-0", "run.json"), "utf8"));
    assert.equal(info.resumes.length, 1, "the run was resumed once");
    assert.equal(info.resumes[0].fromStep, 8, "from the checkpoint at step 8");

    assert.deepEqual(JSON.parse(readFileSync(join(killed, "weights.json"), "utf8")), JSON.parse(readFileSync(join(straight, "weights.json"), "utf8")), "final weights bit-identical");
    const rows = metricRows(killed);
    const steps = Array.from({ length: 18 }, (_, i) => i + 1);
    const lossSteps = rows.filter((r) => "train/loss" in r).map((r) => r._step);
    assert.deepEqual(lossSteps, steps, "every step's loss logged once, in order");
    assert.deepEqual(rows.filter((r) => "eval/loss" in r).map((r) => r._step), [6, 12, 18], "one evaluation per epoch");
    // The resumed run logs the same numbers as the uninterrupted one, not just the same steps.
    const strip = (rs: Record<string, number>[]) => rs.map(({ _time, _runtime, ...rest }) => rest);
    assert.deepEqual(strip(rows), strip(metricRows(straight)));
    assert.deepEqual(readdirSync(join(killed, "out")).filter((d) => d.startsWith("step_")).sort(), ["step_00000004", "step_00000008", "step_00000012", "step_00000016"]);
  } finally {
    rmSync(straight, { recursive: true, force: true });
    rmSync(killed, { recursive: true, force: true });
  }
});
