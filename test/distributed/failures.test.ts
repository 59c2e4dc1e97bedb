import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explain, isAlive, launch, leftoverSegments, type RankResult } from "./harness.js";

/** No process of the run is alive and none left a shared-memory segment. */
function assertClean(results: RankResult[]): void {
  for (const r of results) assert.ok(!isAlive(r.pid), `rank ${r.rank} (pid ${r.pid}) is still running`);
  assert.deepEqual(leftoverSegments(results.map((r) => r.pid)), []);
}

const errorOf = (r: RankResult) => (r.result as { error: string | null } | undefined)?.error ?? null;

describe("failures end in clear errors, within the timeout, and leave nothing behind", { concurrency: 2 }, () => {
  it("a rank that never calls the collective is named by the ranks that time out", async () => {
    const results = await launch({ world: 3, script: "failures.ts", env: { SCENARIO: "never_calls", OP_TIMEOUT_MS: "2000" } });
    for (const r of [results[0]!, results[2]!]) {
      const e = errorOf(r);
      assert.ok(e, explain(results));
      assert.match(e!, new RegExp(`^allReduce #1 failed on rank ${r.rank}: `));
      assert.match(e!, /timed out after \d+ ms/);
      assert.match(e!, /Ranks that never arrived at it: 1\.$/);
    }
    assertClean(results);
  });

  for (const transport of ["shm", "tcp"]) {
    it(`a rank that dies mid-collective is reported as dead (${transport})`, async () => {
      const results = await launch({ world: 2, script: "failures.ts", env: { SCENARIO: "dies_mid_collective", RINGTORCH_TRANSPORT: transport } });
      assert.equal(results[1]!.signal, "SIGKILL");
      const e = errorOf(results[0]!);
      assert.ok(e, explain(results));
      assert.match(e!, /^allReduce #\d failed on rank 0: rank 1 (\(pid \d+\) exited|closed its connection)/);
      assert.doesNotMatch(e!, /timed out/);
      assertClean(results);
    });
  }

  it("RINGTORCH_DISTRIBUTED_DEBUG=DETAIL names the first rank whose shape differs, on every rank", async () => {
    const results = await launch({ world: 3, script: "failures.ts", env: { SCENARIO: "sizes_differ", RINGTORCH_DISTRIBUTED_DEBUG: "DETAIL" } });
    for (const r of results) {
      assert.equal(r.code, 0, explain(results));
      assert.equal(
        errorOf(r),
        "RINGTORCH_DISTRIBUTED_DEBUG=DETAIL found ranks disagreeing on collective #1: rank 0 called allReduce(dtype=float32, shape=[4], op=sum), " +
          "but rank 1 called allReduce(dtype=float32, shape=[5], op=sum). Every rank of the group must call the same collectives in the same order with the same shapes and dtypes.",
      );
    }
    assertClean(results);
  });

  it("without the debug mode, different sizes still fail with an explanation", async () => {
    const results = await launch({ world: 2, script: "failures.ts", env: { SCENARIO: "sizes_differ", OP_TIMEOUT_MS: "5000" } });
    const errors = results.map(errorOf);
    assert.ok(errors.every((e) => e !== null), explain(results));
    assert.ok(errors.some((e) => /sent \d+ bytes where this rank expected \d+: the ranks passed tensors of different sizes or dtypes/.test(e!)), errors.join("\n"));
    assertClean(results);
  });

  it("debug mode names different collectives", async () => {
    const results = await launch({ world: 2, script: "failures.ts", env: { SCENARIO: "different_collectives", RINGTORCH_DISTRIBUTED_DEBUG: "DETAIL" } });
    for (const r of results) assert.match(errorOf(r) ?? "", /rank 0 called allReduce\(dtype=float32, shape=\[4\], op=sum\), but rank 1 called broadcast\(dtype=float32, shape=\[4\], src=0\)/);
    assertClean(results);
  });

  it("an error nobody catches still ends the process", async () => {
    const results = await launch({ world: 2, script: "failures.ts", env: { SCENARIO: "uncaught", OP_TIMEOUT_MS: "1500" } });
    assert.notEqual(results[0]!.code, 0);
    assert.equal(results[0]!.signal, null, "rank 0 had to be killed");
    assert.match(results[0]!.stderr, /DistributedError: allReduce #1 failed on rank 0: timed out after 1500 ms/);
    assertClean(results);
  });
});
