import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { explain, launch } from "./harness.js";

/**
 * Two "hosts": network namespaces joined by a veth pair, each with its own /dev/shm, so the ranks
 * cannot share memory and must talk TCP across the link. The namespaces, addresses and link are
 * this test's own and are removed afterwards. Needs root and iproute2; skipped (saying why) where
 * namespaces cannot be made.
 */
const tag = `${process.pid % 100000}`;
const ns = [`rt${tag}a`, `rt${tag}b`];
const veth = [`rtv${tag}a`, `rtv${tag}b`];
const subnet = `10.251.${process.pid % 250}`;
const addr = [`${subnet}.1`, `${subnet}.2`];

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: "pipe" });
}

function setUp(): string | null {
  try {
    ip("netns", "add", ns[0]!);
    ip("netns", "add", ns[1]!);
    ip("link", "add", veth[0]!, "type", "veth", "peer", "name", veth[1]!);
    for (const i of [0, 1]) {
      ip("link", "set", veth[i]!, "netns", ns[i]!);
      ip("-n", ns[i]!, "addr", "add", `${addr[i]}/24`, "dev", veth[i]!);
      ip("-n", ns[i]!, "link", "set", veth[i]!, "up");
      ip("-n", ns[i]!, "link", "set", "lo", "up");
    }
    return null;
  } catch (err) {
    tearDown();
    return `network namespaces cannot be made here (${(err as Error).message.split("\n")[0]}); needs root and iproute2`;
  }
}

function tearDown(): void {
  for (const n of ns) {
    try {
      ip("netns", "del", n);
    } catch {
      // Not created.
    }
  }
}

describe("two hosts joined by a network link", () => {
  let skip: string | null = null;
  before(() => {
    skip = setUp();
  });
  after(tearDown);

  it("run a collective over TCP across the link", async (t) => {
    if (skip) return t.skip(skip);
    const results = await launch({
      world: 2,
      script: "two_hosts.ts",
      env: { MASTER_ADDR: addr[0]! },
      // Each rank in its namespace, with a /dev/shm of its own as on a separate machine.
      prefix: (rank) => ["ip", "netns", "exec", ns[rank]!, "sh", "-c", 'mount -t tmpfs tmpfs /dev/shm && exec "$0" "$@"'],
      timeoutMs: 60_000,
    });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const [rank, r] of results.entries()) {
      assert.deepEqual(r.result, { firstBad: -1, gathered: [10, 11], transports: rank === 0 ? ["self", "tcp"] : ["tcp", "self"] });
    }
  });

  it("mix shared memory and TCP in one ring (two ranks on the first host, one on the second)", async (t) => {
    if (skip) return t.skip(skip);
    const results = await launch({
      world: 3,
      script: "two_hosts.ts",
      env: { MASTER_ADDR: addr[0]! },
      // Ranks 0 and 1 share the first namespace and its /dev/shm; rank 2 has its own.
      prefix: (rank) =>
        rank < 2
          ? ["ip", "netns", "exec", ns[0]!]
          : ["ip", "netns", "exec", ns[1]!, "sh", "-c", 'mount -t tmpfs tmpfs /dev/shm && exec "$0" "$@"'],
      timeoutMs: 60_000,
    });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const expected = [["self", "shm", "tcp"], ["shm", "self", "tcp"], ["tcp", "tcp", "self"]];
    for (const [rank, r] of results.entries()) {
      assert.deepEqual(r.result, { firstBad: -1, gathered: [10, 11, 12], transports: expected[rank] });
    }
  });
});
