import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explain, launch } from "./harness.js";

interface Report {
  failures: string[];
  hashes: Record<string, string>;
  transports: string[];
  cases: number;
}

/**
 * Every collective, dtype, reduce op and algorithm, for lengths that do not divide evenly and
 * empty tensors, checked on every rank against a one-line reference over all ranks' inputs
 * (workers/collectives.ts). One launch per world size and transport keeps it fast.
 */
describe("collectives match their reference on every rank", { concurrency: 1 }, () => {
  // The full grid where it matters most (both transports at the odd size), fewer lengths elsewhere.
  // TCP runs with 1 to 4 connections per pair; with RINGTORCH_TCP_STRIPE_KB=0 every message past
  // 64 bytes is cut into one part per connection, so odd lengths leave short and missing parts.
  const configs: [number, "shm" | "tcp", "full" | "small", number][] = [
    [1, "shm", "full", 1],
    [2, "shm", "full", 1],
    [2, "tcp", "small", 1],
    [2, "tcp", "small", 4],
    [3, "shm", "full", 1],
    [3, "tcp", "full", 3],
    [4, "shm", "small", 1],
    [4, "tcp", "small", 2],
  ];
  for (const [world, transport, grid, streams] of configs) {
    const over = world === 1 ? "no transport" : transport === "tcp" ? `tcp with ${streams} stream(s) per pair` : transport;
    it(`world size ${world} over ${over} (${grid} grid)`, async () => {
      const tcp = { RINGTORCH_TCP_STREAMS: String(streams), RINGTORCH_TCP_STRIPE_KB: "0" };
      const env = { RINGTORCH_TRANSPORT: transport, CASE_GRID: grid, ...(transport === "tcp" ? tcp : {}) };
      const results = await launch({ world, script: "collectives.ts", env, timeoutMs: 120_000 });
      for (const r of results) assert.equal(r.code, 0, explain(results));
      const reports = results.map((r) => r.result as Report);
      for (const rep of reports) assert.deepEqual(rep.failures, []);
      reports.forEach((rep, rank) =>
        assert.deepEqual(rep.transports, Array.from({ length: world }, (_, r) => (r === rank ? "self" : transport))),
      );
      // All ranks hold bit-identical results (DDP relies on it), whichever algorithm ran.
      for (const rep of reports.slice(1)) assert.deepEqual(rep.hashes, reports[0]!.hashes);
      assert.ok(reports[0]!.cases > (grid === "full" ? 600 : 250), `only ${reports[0]!.cases} cases ran`);
    });
  }
});
