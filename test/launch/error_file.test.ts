import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readErrorFile, record, recordError } from "../../src/launch/error_file.js";
import { formatFailureSummary, rootCause, type FailureRecord } from "../../src/launch/failure.js";
import { readJson, tempDir } from "./helpers.js";

test("recordError writes type, message, stack, timestamp and rank, and the first error of a process wins", (t) => {
  const path = join(tempDir(t), "error.json");
  const saved = { RANK: process.env.RANK, LOCAL_RANK: process.env.LOCAL_RANK };
  process.env.RANK = "5";
  process.env.LOCAL_RANK = "1";
  t.after(() => Object.assign(process.env, saved));
  const before = Date.now();
  class DataError extends Error {
    override name = "DataError";
  }
  assert.equal(recordError(new DataError("shard 3 is empty"), path), path);
  assert.equal(recordError(new Error("a later echo"), path), undefined);
  const written = readJson(path);
  assert.equal(written.type, "DataError");
  assert.equal(written.message, "shard 3 is empty");
  assert.match(String(written.stack), /^DataError: shard 3 is empty\n\s+at /);
  assert.deepEqual([written.rank, written.localRank, written.host, written.pid], [5, 1, hostname(), process.pid]);
  assert.ok(Date.parse(String(written.timestamp)) >= before - 1000, "timestamp is an ISO date of now");
});

test("record() passes results through, and records and rethrows what its function throws", async (t) => {
  const path = join(tempDir(t), "error.json");
  const saved = process.env.RINGTORCH_ERROR_FILE;
  process.env.RINGTORCH_ERROR_FILE = path;
  t.after(() => {
    if (saved === undefined) delete process.env.RINGTORCH_ERROR_FILE;
    else process.env.RINGTORCH_ERROR_FILE = saved;
  });
  assert.equal(await record(() => 42), 42);
  assert.equal(existsSync(path), false);
  await assert.rejects(record(async () => Promise.reject(new RangeError("lr must be positive"))), RangeError);
  assert.deepEqual([readErrorFile(path)?.type, readErrorFile(path)?.message], ["RangeError", "lr must be positive"]);
  // A thrown non-Error is still described.
  const other = join(tempDir(t), "other.json");
  recordError("plain string", other);
  assert.deepEqual([readErrorFile(other)?.type, readErrorFile(other)?.message], ["string", "plain string"]);
});

const failure = (rank: number, timestamp: string, extra: Partial<FailureRecord> = {}): FailureRecord => ({
  host: "h0",
  nodeRank: 0,
  rank,
  localRank: rank,
  pid: 100 + rank,
  exitCode: 1,
  signal: null,
  spawnError: undefined,
  timestamp,
  error: undefined,
  errorFile: undefined,
  stdoutLog: undefined,
  stderrLog: undefined,
  ...extra,
});

test("the root cause is the earliest failure, whatever order they were seen in", () => {
  const a = failure(0, "2025-01-01T00:00:05.000Z");
  const b = failure(1, "2025-01-01T00:00:01.500Z");
  const c = failure(2, "2025-01-01T00:00:03.000Z");
  assert.equal(rootCause([a, b, c]), b);
  assert.equal(rootCause([]), undefined);
});

test("the summary names host, rank, local rank, signal or exit code, time, error and files", () => {
  const root = failure(3, "2025-01-01T00:00:01.000Z", {
    localRank: 1,
    nodeRank: 1,
    host: "node-b",
    exitCode: null,
    signal: "SIGKILL",
    errorFile: "/logs/r/attempt_0/1/error.json",
    stderrLog: "/logs/r/attempt_0/1/stderr.log",
  });
  const echo = failure(0, "2025-01-01T00:00:09.000Z", { error: { type: "TimeoutError", message: "all_reduce #4 timed out", stack: undefined } });
  const text = formatFailureSummary({ runId: "r", restartCount: 0, maxRestarts: 0, attemptDir: "/logs/r/attempt_0", nodeRank: 1 }, root, [echo]);
  for (const part of ["run id r", "2025-01-01T00:00:01.000Z", "node-b (node 1)", "rank       : 3 (local rank 1)", "SIGKILL (9)", "/logs/r/attempt_0/1/error.json", "/logs/r/attempt_0/1/stderr.log"]) {
    assert.ok(text.includes(part), `summary lacks '${part}':\n${text}`);
  }
  assert.match(text, /Other failures:\n  rank 0 \(local rank 0\) on h0: exit code 1 at 2025-01-01T00:00:09.000Z: TimeoutError: all_reduce #4 timed out/);
});
