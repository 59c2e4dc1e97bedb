import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { readCommEnv } from "../../src/distributed/env.js";
import { explain, launch } from "./harness.js";

interface Report {
  sum: number;
  sockets: { rb: number; tb: number }[];
}

const hasSs = spawnSync("ss", ["-V"]).status === 0;

describe("TCP socket buffers (RINGTORCH_TCP_BUFFER_KB)", () => {
  it("reads the setting and refuses a bad one", () => {
    assert.equal(readCommEnv({}).tcpBufferBytes, 0, "by default the kernel autotunes");
    assert.equal(readCommEnv({ RINGTORCH_TCP_BUFFER_KB: "192" }).tcpBufferBytes, 192 * 1024);
    assert.throws(() => readCommEnv({ RINGTORCH_TCP_BUFFER_KB: "-1" }), /RINGTORCH_TCP_BUFFER_KB must be an integer in 0\.\.1048576/);
    assert.throws(() => readCommEnv({ RINGTORCH_TCP_BUFFER_KB: "4M" }), /RINGTORCH_TCP_BUFFER_KB must be an integer/);
  });

  // The kernel reports (ss) a set buffer as twice the size asked for, and an autotuned one as
  // whatever it has grown to; 192 KiB is a size autotuning has no reason to land on exactly.
  // (TCP with the default, autotuned buffers is what the collectives tests run on.)
  const pinned = 2 * 192 * 1024;
  const streams = 2;
  it(`pins every transport socket at 192 KiB (2 ranks, ${streams} streams)`, { skip: hasSs ? false : "needs ss (iproute2)" }, async () => {
    const env = { RINGTORCH_TRANSPORT: "tcp", RINGTORCH_TCP_STREAMS: String(streams), RINGTORCH_TCP_STRIPE_KB: "0", RINGTORCH_TCP_BUFFER_KB: "192" };
    const results = await launch({ world: 2, script: "socket_buffers.ts", env, timeoutMs: 60_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const r of results) {
      const rep = r.result as Report;
      assert.equal(rep.sum, 3, "the all-reduce over those sockets");
      // Each rank's transport sockets: one per stream to its one peer. Its store connections
      // (Node's own sockets) are never pinned.
      const atPinned = rep.sockets.filter((s) => s.rb === pinned && s.tb === pinned).length;
      assert.equal(atPinned, streams, `rank ${r.rank}'s sockets: ${JSON.stringify(rep.sockets)}`);
    }
  });
});
