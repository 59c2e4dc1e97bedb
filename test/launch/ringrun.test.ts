import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { readJson, runRingrun, tempDir, workerFixture } from "./helpers.js";

interface RankReport {
  seen: number[];
  args: string[];
  env: Record<string, string | undefined>;
  hasToken: boolean;
}

/** What every rank should have read from the store: rank r publishes 10r+1. */
const expectedSeen = (worldSize: number) => Array.from({ length: worldSize }, (_, r) => r * 10 + 1);

/** The one run-id folder under a log dir (standalone run ids are fresh uuids). */
function runDir(logDir: string): string {
  const [only, ...rest] = readdirSync(logDir);
  assert.ok(only !== undefined && rest.length === 0, `expected one run folder in ${logDir}`);
  return join(logDir, only);
}

test("a standalone job runs every rank with torchrun's environment contract and the script's own arguments", async (t) => {
  const out = tempDir(t);
  const logs = join(out, "logs");
  const result = await runRingrun(["--standalone", "--nproc_per_node=3", "--role", "trainer", "--log-dir", logs, workerFixture, out, "--lr", "0.5"]);
  assert.equal(result.code, 0, result.stderr);
  const runId = readdirSync(logs)[0]!;
  for (let rank = 0; rank < 3; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.deepEqual(report.seen, expectedSeen(3));
    assert.deepEqual(report.args, ["--lr", "0.5"]);
    assert.ok(report.hasToken, "every worker gets the store token");
    const errorFile = join(logs, runId, "attempt_0", String(rank), "error.json");
    assert.deepEqual(report.env, {
      RANK: String(rank),
      LOCAL_RANK: String(rank),
      GROUP_RANK: "0",
      ROLE_RANK: String(rank),
      WORLD_SIZE: "3",
      LOCAL_WORLD_SIZE: "3",
      ROLE_WORLD_SIZE: "3",
      GROUP_WORLD_SIZE: "1",
      ROLE_NAME: "trainer",
      MASTER_ADDR: "127.0.0.1",
      MASTER_PORT: report.env.MASTER_PORT,
      RINGTORCH_RESTART_COUNT: "0",
      RINGTORCH_MAX_RESTARTS: "0",
      RINGTORCH_RUN_ID: runId,
      RINGTORCH_ERROR_FILE: errorFile,
      TORCHELASTIC_RESTART_COUNT: "0",
      TORCHELASTIC_MAX_RESTARTS: "0",
      TORCHELASTIC_RUN_ID: runId,
      TORCHELASTIC_ERROR_FILE: errorFile,
      RINGTORCH_USE_AGENT_STORE: "1",
      RINGTORCH_NUM_THREADS: "1",
      OMP_NUM_THREADS: "1",
      RINGTORCH_STORE_PREFIX: "/worker/attempt_0/",
    });
    assert.match(report.env.MASTER_PORT!, /^\d+$/);
    assert.ok(result.stdout.includes(`[trainer${rank}]:rank ${rank} done\n`), `console lines carry the rank prefix:\n${result.stdout}`);
  }
});

test("a worker that throws on its first attempt is restarted with its whole group and then succeeds", async (t) => {
  const out = tempDir(t);
  const logs = join(out, "logs");
  const result = await runRingrun(["--standalone", "--nproc-per-node", "2", "--max-restarts", "2", "--log-dir", logs, workerFixture, out, "--throw-rank", "1", "--until-restart", "1"]);
  assert.equal(result.code, 0, result.stderr);
  for (let rank = 0; rank < 2; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.equal(report.env.RINGTORCH_RESTART_COUNT, "1");
    assert.equal(report.env.RINGTORCH_STORE_PREFIX, "/worker/attempt_1/");
    assert.deepEqual(report.seen, expectedSeen(2));
  }
  const firstError = readJson(join(runDir(logs), "attempt_0", "1", "error.json"));
  assert.deepEqual([firstError.type, firstError.message, firstError.rank], ["Error", "planned failure on rank 1", 1]);
  assert.match(result.stderr, /restarting all workers \(restart 1 of 2\)/);
});

test("with --max-restarts 0 the job fails with a root-cause summary and the failing rank's error file", async (t) => {
  const out = tempDir(t);
  const logs = join(out, "logs");
  const jobErrorFile = join(out, "job-error.json");
  const result = await runRingrun(
    ["--standalone", "--nproc-per-node", "2", "--max-restarts", "0", "--log-dir", logs, workerFixture, out, "--throw-rank", "1"],
    { TORCHELASTIC_ERROR_FILE: jobErrorFile },
  );
  assert.equal(result.code, 1);
  const errorFile = join(runDir(logs), "attempt_0", "1", "error.json");
  assert.deepEqual(readJson(errorFile).rank, 1);
  assert.match(result.stderr, /Root cause \(first observed failure\):/);
  assert.match(result.stderr, /rank {7}: 1 \(local rank 1\), pid \d+/);
  assert.match(result.stderr, /exit code {2}: 1\n/);
  assert.match(result.stderr, /error {6}: Error: planned failure on rank 1\n/);
  assert.ok(result.stderr.includes(`error file : ${errorFile}`), result.stderr);
  assert.match(result.stderr, /time {7}: \d{4}-\d\d-\d\dT/);
  assert.deepEqual(readJson(jobErrorFile).rank, 1, "the root cause is copied to ringrun's own TORCHELASTIC_ERROR_FILE");
  assert.equal(existsSync(join(out, "rank0.json")), false, "the surviving rank was stopped before it could finish");
});

test("a worker killed by SIGKILL is reported with its signal", async (t) => {
  const out = tempDir(t);
  const result = await runRingrun(["--standalone", "--nproc-per-node", "2", "--log-dir", join(out, "logs"), workerFixture, out, "--kill-rank", "0"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /rank {7}: 0 \(local rank 0\)/);
  assert.match(result.stderr, /signal {5}: SIGKILL \(9\)/);
});

test("--tee keeps every rank's output in its files while --local-ranks-filter shows one rank on the console", async (t) => {
  const out = tempDir(t);
  const logs = join(out, "logs");
  const result = await runRingrun(["--standalone", "--nproc-per-node", "2", "--tee", "3", "--local-ranks-filter", "1", "--log-dir", logs, workerFixture, out]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(result.stdout.includes("[default1]:rank 1 done"));
  assert.ok(!result.stdout.includes("[default0]"), `rank 0 was filtered from the console:\n${result.stdout}`);
  for (const rank of [0, 1]) {
    const stdout = readFileSync(join(runDir(logs), "attempt_0", String(rank), "stdout.log"), "utf8");
    assert.equal(stdout, `rank ${rank} of 2 starting, restart 0\nrank ${rank} done\n`, "log files hold the plain lines");
  }
});

test("--redirects sends output to files only; -m runs a module specifier from the working directory", async (t) => {
  const out = tempDir(t);
  const logs = join(out, "logs");
  const result = await runRingrun(["--standalone", "--nproc-per-node", "1", "-r", "1", "--log-dir", logs, "-m", "./test/launch/fixtures/worker.ts", out]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "");
  assert.deepEqual(readJson<RankReport>(join(out, "rank0.json")).seen, expectedSeen(1));
  assert.match(readFileSync(join(runDir(logs), "attempt_0", "0", "stdout.log"), "utf8"), /rank 0 done/);
});

test("--no-python runs an executable with the same environment contract and reports its exit code", async (t) => {
  const out = tempDir(t);
  // Rank 1 fails only once rank 0 has written its file, so that file is there to check.
  const script = 'echo "$RANK/$WORLD_SIZE/$LOCAL_RANK/$RINGTORCH_RUN_ID" > "$0/env$RANK"; [ "$RANK" = 0 ] && exit 0; while [ ! -s "$0/env0" ]; do sleep 0.05; done; exit 3';
  const result = await runRingrun(["--nproc-per-node", "2", "--master-port", "0", "--rdzv-id", "shell-job", "--log-dir", join(out, "logs"), "--no-python", "sh", "-c", script, out]);
  assert.equal(readFileSync(join(out, "env0"), "utf8"), "0/2/0/shell-job\n");
  assert.equal(readFileSync(join(out, "env1"), "utf8"), "1/2/1/shell-job\n");
  assert.equal(result.code, 1);
  assert.match(result.stderr, /rank {7}: 1 \(local rank 1\)/);
  assert.match(result.stderr, /exit code {2}: 3\n/);
});
