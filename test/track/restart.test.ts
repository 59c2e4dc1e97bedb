import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readEvents } from "./event_reader.js";

const WORKER = "test/track/workers/restart_train.ts";

test("rank 1 SIGKILLed and restarted by ringrun: both runs continue the same files with every step once", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-restart-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, CKPT_DIR: join(dir, "ckpt"), EXP_DIR: join(dir, "exp"), STEPS: "12", SAVE_EVERY: "4", KILL_STEP: "10", RINGTORCH_QUIET: "1" };
  for (const k of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_RUN_ID"]) delete env[k];
  const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "--max-restarts", "2", "--monitor-interval", "0.1", WORKER], {
    env,
    encoding: "utf8",
    timeout: 180_000,
  });
  assert.equal(r.status, 0, `ringrun failed:\n${r.stdout}\n${r.stderr}`);
  const runs = readdirSync(join(dir, "exp")).sort();
  assert.deepEqual(runs, ["rank-0", "rank-1"]);
  const ids = new Set<string>();
  for (const [rank, name] of runs.entries()) {
    const runDir = join(dir, "exp", name);
    const info = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
    ids.add(info.experimentId);
    assert.equal(info.id, `${info.experimentId}-${rank}`);
    assert.equal(info.resumes.length, 1, `rank ${rank} resumed once`);
    assert.equal(info.resumes[0].fromStep, 8, "rewound to the checkpoint at step 8");
    assert.ok(info.finishedAt);
    const text = readFileSync(join(runDir, "metrics.jsonl"), "utf8");
    const rows = text.trimEnd().split("\n").map((l) => JSON.parse(l));
    const steps = Array.from({ length: 12 }, (_, i) => i + 1);
    assert.deepEqual(rows.map((r) => r._step), steps, `rank ${rank}: each step once, in order`);
    // The all-reduced sum proves both ranks took each step together: (s + 0) + (s + 1).
    assert.deepEqual(rows.map((r) => [r.loss, r.sum]), steps.map((s) => [s * 10 + rank, 2 * s + 1]));
    const tb = readdirSync(runDir).filter((f) => f.includes("tfevents"));
    assert.equal(tb.length, 1, "one event file per run");
    const loss = readEvents(join(runDir, tb[0])).flatMap((e) => (e.values ?? []).filter((v) => v.tag === "loss").map((v) => [e.step, v.simpleValue]));
    assert.deepEqual(loss, steps.map((s) => [s, s * 10 + rank]));
    const system = readFileSync(join(runDir, "system.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.ok(system.length > 0 && system.every((s) => s["system/rss_mb"] > 0), "system metrics sampled");
    const timed = system.filter((s) => "system/step_time_s" in s);
    assert.ok(timed.length > 0, "a sample covers logged steps");
    // Every step all-reduces on the training thread, so some of each step is spent waiting, never more than all of it.
    for (const s of timed) assert.ok(s["system/comm_wait_percent"] > 0 && s["system/comm_wait_percent"] <= 100, JSON.stringify(s));
  }
  assert.equal(ids.size, 1, "both ranks' runs belong to one experiment id");
  const ckpts = readdirSync(join(dir, "ckpt")).sort();
  const state = JSON.parse(readFileSync(join(dir, "ckpt", ckpts.at(-1)!, "state.json"), "utf8"));
  assert.equal(state.runId, [...ids][0]);
});
