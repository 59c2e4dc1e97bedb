import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const WORKER = "test/trainer/workers/bert_loops.ts";

function cleanEnv(out: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOOPS_OUT: out, RINGTORCH_QUIET: "1" };
  for (const k of ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_RUN_ID", "RINGTORCH_RESTART_COUNT", "TORCHELASTIC_RESTART_COUNT"]) delete env[k];
  return env;
}

interface RankOut {
  world: number;
  handLosses: number[];
  trainerLosses: number[];
  hand: Record<string, number[]>;
  trainer: Record<string, number[]>;
}

function check(out: string, world: number): void {
  // 32 training records in batches of 4: 8 steps an epoch on one rank, 4 on each of two.
  const steps = (2 * 32) / (4 * world);
  for (let rank = 0; rank < world; rank++) {
    const o = JSON.parse(readFileSync(join(out, `rank_${rank}.json`), "utf8")) as RankOut;
    assert.equal(o.world, world);
    assert.equal(o.handLosses.length, steps);
    assert.deepEqual(o.trainerLosses, o.handLosses, `${world} rank(s), rank ${rank}: the Trainer's losses are the hand loop's`);
    assert.deepEqual(o.trainer, o.hand, `${world} rank(s), rank ${rank}: final weights bit-identical`);
  }
}

test("BERT on real records: the Trainer and the hand loop of bert_classifier take the same steps on one process", () => {
  const out = mkdtempSync(join(tmpdir(), "ringtorch-bert-loops-1-"));
  try {
    const r = spawnSync(process.execPath, ["--import", "tsx", "--conditions=source", WORKER], { env: cleanEnv(out), encoding: "utf8", timeout: 120_000 });
    assert.equal(r.status, 0, `worker failed:\n${r.stdout}\n${r.stderr}`);
    check(out, 1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("BERT on real records: the Trainer and the hand loop take the same steps on 2 ranks under ringrun", () => {
  const out = mkdtempSync(join(tmpdir(), "ringtorch-bert-loops-2-"));
  try {
    const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", WORKER], { env: cleanEnv(out), encoding: "utf8", timeout: 180_000 });
    assert.equal(r.status, 0, `ringrun failed:\n${r.stdout}\n${r.stderr}`);
    check(out, 2);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
