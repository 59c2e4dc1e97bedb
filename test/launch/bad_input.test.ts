import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { test } from "node:test";
import { freePort, runRingrun, workerFixture, type RunResult } from "./helpers.js";

/** A usage problem is one line on stderr, nothing on stdout, and a non-zero exit, before any worker starts. */
function assertOneLineError(result: RunResult, pattern: RegExp): void {
  assert.notEqual(result.code, 0);
  assert.equal(result.stdout, "");
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one line, got:\n${result.stderr}`);
  assert.match(lines[0]!, /^ringrun: error: /);
  assert.match(lines[0]!, pattern);
}

test("an unknown flag is refused with its name", async () => {
  assertOneLineError(await runRingrun(["--nproc-per-nodes", "2", workerFixture]), /unknown option --nproc-per-nodes/);
});

test("--nproc-per-node 0 is refused", async () => {
  assertOneLineError(await runRingrun(["--standalone", "--nproc-per-node", "0", workerFixture]), /--nproc-per-node expects a positive integer.*'0'/);
});

test("a missing script is refused with the path looked for", async () => {
  assertOneLineError(await runRingrun(["--standalone", "no/such/train.ts"]), /training script no\/such\/train\.ts does not exist \(looked for \/.*no\/such\/train\.ts\)/);
});

test("an unreachable rendezvous endpoint fails within its join timeout, naming the address", async () => {
  const port = await freePort();
  const result = await runRingrun(
    ["--nnodes", "2", "--node-rank", "1", "--master-port", String(port), "--rdzv-conf", "join_timeout=1", workerFixture],
    { RINGTORCH_STORE_TOKEN: randomBytes(32).toString("hex") },
  );
  assertOneLineError(result, new RegExp(`127\\.0\\.0\\.1:${port}.*within 1000 ms`));
});

test("a store port already in use is refused, saying so", async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  assertOneLineError(await runRingrun(["--master-port", String(port), workerFixture]), new RegExp(`127\\.0\\.0\\.1:${port}: the port is already in use`));
});

test("--help documents the flags and exits 0", async () => {
  const result = await runRingrun(["--help"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^usage: ringrun /);
  assert.match(result.stdout, /--max-restarts N\n.*\(default: 0\)/);
});
