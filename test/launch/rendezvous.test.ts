import assert from "node:assert/strict";
import { test } from "node:test";
import { TCPStore, TCPStoreServer } from "../../src/distributed/store/tcp_store.js";
import type { RendezvousTimeouts } from "../../src/launch/launch_config.js";
import { Rendezvous, RendezvousError, type RendezvousOptions, type RoundInfo } from "../../src/launch/rendezvous.js";

const token = "rendezvous-test-token-0123456789abcdef";
const timeouts: RendezvousTimeouts = { joinTimeoutMs: 5000, lastCallTimeoutMs: 300, heartbeatTimeoutMs: 5000, exitBarrierTimeoutMs: 5000 };

/** One store server and a client per simulated node, all in this process. */
async function cluster(t: { after(fn: () => Promise<void>): void }) {
  const server = await TCPStoreServer.listen({ port: 0, token });
  const clients: TCPStore[] = [];
  t.after(async () => {
    for (const c of clients) void c.close();
    await server.close();
  });
  return (opts: Partial<RendezvousOptions> & { nproc: number }) => {
    const full: RendezvousOptions = {
      backend: "static",
      minNodes: 1,
      maxNodes: 1,
      nodeRank: 0,
      timeouts,
      host: `host-${opts.nodeRank ?? "x"}`,
      endpoint: `127.0.0.1:${server.port}`,
      ...opts,
    };
    return TCPStore.connect({ host: "127.0.0.1", port: server.port, token }).then((store) => {
      clients.push(store);
      return new Rendezvous(store, full);
    });
  };
}

test("static: nodes with different process counts get consecutive rank ranges in node-rank order", async (t) => {
  const node = await cluster(t);
  const nprocs = [2, 3, 1];
  const agents = await Promise.all(nprocs.map((nproc, nodeRank) => node({ nproc, nodeRank, maxNodes: 3, minNodes: 3 })));
  // Join in reverse order: ranks follow node rank, not arrival.
  const infos = (await Promise.all([...agents].reverse().map((a) => a.join()))).reverse() as RoundInfo[];
  assert.deepEqual(infos.map((i) => i.rankOffset), [0, 2, 5]);
  assert.deepEqual(infos.map((i) => [i.nodeRank, i.worldSize, i.round, i.restartCount]), [[0, 6, 0, 0], [1, 6, 0, 0], [2, 6, 0, 0]]);
  assert.deepEqual(infos[0]!.nodes.map((n) => n.host), ["host-0", "host-1", "host-2"]);
});

test("static: the first end of a round stands for every node, and the next round carries the restart count", async (t) => {
  const node = await cluster(t);
  const [a, b] = await Promise.all([0, 1].map((nodeRank) => node({ nproc: 1, nodeRank, maxNodes: 2, minNodes: 2 })));
  await Promise.all([a!.join(), b!.join()]);
  const failure = { host: "host-1", nodeRank: 1, rank: 1, localRank: 0, pid: 1, exitCode: 1, signal: null, spawnError: undefined, timestamp: new Date().toISOString(), error: undefined, errorFile: undefined, stdoutLog: undefined, stderrLog: undefined };
  assert.equal((await b!.endRound({ reason: "failed", failure })).reason, "failed");
  assert.equal((await a!.endRound({ reason: "membership" })).reason, "failed", "a later end does not replace the first");
  assert.equal((await a!.roundEnd())?.reason, "failed");
  const next = await Promise.all([a!, b!].map(async (r) => r.join(await r.advance(1)))) as RoundInfo[];
  assert.deepEqual(next.map((i) => [i.round, i.restartCount]), [[1, 1], [1, 1]]);
  assert.equal(await a!.roundEnd(), undefined, "the new round has not ended");
});

test("static: the round succeeds once every node reports done", async (t) => {
  const node = await cluster(t);
  const [a, b] = await Promise.all([0, 1].map((nodeRank) => node({ nproc: 1, nodeRank, maxNodes: 2, minNodes: 2 })));
  await Promise.all([a!.join(), b!.join()]);
  await a!.markDone();
  assert.equal(await b!.roundEnd(), undefined);
  await b!.markDone();
  assert.deepEqual(await a!.roundEnd(), { reason: "succeeded" });
});

test("static: a node rank claimed twice and a node that never comes are errors that say so", async (t) => {
  const node = await cluster(t);
  const first = await node({ nproc: 1, nodeRank: 1, maxNodes: 2, minNodes: 2, timeouts: { ...timeouts, joinTimeoutMs: 300 } });
  const twin = await node({ nproc: 1, nodeRank: 1, maxNodes: 2, minNodes: 2 });
  const waiting = first.join();
  await assert.rejects(twin.join(), (e: Error) => e instanceof RendezvousError && /node rank 1 is already taken/.test(e.message));
  await assert.rejects(waiting, (e: Error) => e instanceof RendezvousError && /node rank\(s\) 0 of 2 never joined/.test(e.message));
});

test("c10d: MIN:MAX closes after the last call with the nodes present; a late node waits for the next round and joins it", async (t) => {
  const node = await cluster(t);
  const opts = { backend: "c10d" as const, minNodes: 2, maxNodes: 3, nproc: 2 };
  const [a, b, late] = await Promise.all([node(opts), node(opts), node(opts)]);
  const first = (await Promise.all([a!.join(), b!.join()])) as RoundInfo[];
  assert.deepEqual(first.map((i) => [i.nodes.length, i.worldSize]), [[2, 4], [2, 4]]);
  assert.deepEqual(first.map((i) => i.nodeRank).sort(), [0, 1]);
  const lateJoin = late!.join();
  // The running nodes learn that a node waits, end the round for it and rejoin together.
  let waiting = false;
  for (let i = 0; i < 50 && !waiting; i++) {
    waiting = await a!.nodesWaiting();
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(waiting, "the running nodes see the waiting node");
  await a!.endRound({ reason: "membership" });
  const second = (await Promise.all([lateJoin, a!.join(await a!.advance(0)), b!.join(await b!.advance(0))])) as RoundInfo[];
  assert.deepEqual(second.map((i) => [i.round, i.nodes.length, i.worldSize, i.restartCount]), [[1, 3, 6, 0], [1, 3, 6, 0], [1, 3, 6, 0]]);
  assert.deepEqual(second.map((i) => i.nodeRank).sort(), [0, 1, 2]);
});

test("c10d: too few nodes fail the join with the count that came", async (t) => {
  const node = await cluster(t);
  const lonely = await node({ backend: "c10d", minNodes: 2, maxNodes: 2, nproc: 1, timeouts: { ...timeouts, joinTimeoutMs: 300 } });
  await assert.rejects(lonely.join(), /1 node\(s\) joined, at least 2 needed/);
});

test("heartbeats: a node whose heartbeat stops is reported once heartbeat_timeout passes", async (t) => {
  const node = await cluster(t);
  const fast = { ...timeouts, heartbeatTimeoutMs: 200 };
  const [a, b] = await Promise.all([0, 1].map((nodeRank) => node({ nproc: 1, nodeRank, maxNodes: 2, minNodes: 2, timeouts: fast })));
  await Promise.all([a!.join(), b!.join()]);
  assert.deepEqual(await a!.heartbeat(), []);
  await b!.heartbeat();
  assert.deepEqual(await a!.heartbeat(), [], "b's counter moved");
  let silent: number[] = [];
  for (let i = 0; i < 40 && silent.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    silent = await a!.heartbeat();
  }
  assert.deepEqual(silent, [1]);
});
