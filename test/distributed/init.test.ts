import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import * as dist from "../../src/distributed/index.js";
import { connectHandshake } from "../../src/distributed/engine/handshake.js";
import { readCommEnv } from "../../src/distributed/env.js";
import { loadCommNative } from "../../src/distributed/native.js";
import { resolveRendezvous } from "../../src/distributed/rendezvous.js";
import { siblingModule, spawnWorker } from "../../src/util/spawn_worker.js";
import { tensor } from "../../src/ops/creation.js";
import { explain, freePort, launch, leftoverSegments } from "./harness.js";

describe("rendezvous settings", () => {
  it("reads the torchrun environment and the init methods", () => {
    assert.deepEqual(resolveRendezvous({}, { MASTER_ADDR: "10.1.2.3", MASTER_PORT: "29500", RANK: "2", WORLD_SIZE: "4" }), {
      host: "10.1.2.3",
      port: 29500,
      rank: 2,
      worldSize: 4,
      agentStore: false,
    });
    assert.equal(resolveRendezvous({}, { MASTER_ADDR: "h", MASTER_PORT: "1", RANK: "0", WORLD_SIZE: "2", RINGTORCH_USE_AGENT_STORE: "1" }).agentStore, true);
    assert.deepEqual(resolveRendezvous({ initMethod: "tcp://[::1]:2345", rank: 1, worldSize: 3 }, {}), { host: "::1", port: 2345, rank: 1, worldSize: 3, agentStore: false });
    assert.equal(resolveRendezvous({}, {}).worldSize, 1, "no RANK/WORLD_SIZE: a one-process job");
  });

  it("says what is wrong with bad settings", () => {
    assert.throws(() => resolveRendezvous({}, { RANK: "0", WORLD_SIZE: "2" }), /MASTER_ADDR and MASTER_PORT must be set/);
    assert.throws(() => resolveRendezvous({}, { MASTER_ADDR: "h", MASTER_PORT: "1", RANK: "4", WORLD_SIZE: "4" }), /rank must be in 0\.\.3 for a world of 4, got 4/);
    assert.throws(() => resolveRendezvous({ initMethod: "tcp://host" , rank: 0, worldSize: 1 }, {}), /must look like tcp:\/\/host:port/);
    assert.throws(() => resolveRendezvous({ initMethod: "file:///tmp/x" }, {}), /not supported/);
    assert.throws(() => resolveRendezvous({}, { MASTER_ADDR: "h", MASTER_PORT: "1", RANK: "x", WORLD_SIZE: "2" }), /RANK must be an integer, got "x"/);
    assert.throws(() => readCommEnv({ RINGTORCH_TCP_STREAMS: "9" }), /RINGTORCH_TCP_STREAMS must be an integer in 1\.\.8, got "9"/);
    assert.equal(readCommEnv({}).tcpStreams, 1);
    assert.equal(readCommEnv({ RINGTORCH_TCP_STRIPE_KB: "0" }).stripeBytes, 0);
  });
});

describe("initProcessGroup in this process", () => {
  it("runs a one-process group without a store", async () => {
    await dist.initProcessGroup({ rank: 0, worldSize: 1 });
    assert.equal(dist.isInitialized(), true);
    assert.equal(dist.getRank(), 0);
    assert.equal(dist.getWorldSize(), 1);
    const t = tensor([1, 2, 3]);
    dist.allReduce(t, { op: dist.ReduceOp.AVG });
    assert.deepEqual(Array.from(t.storage.data.subarray(t.offset, t.offset + 3)), [1, 2, 3]);
    const out = [tensor([0, 0, 0])];
    dist.allGather(out, t);
    assert.deepEqual(Array.from(out[0]!.storage.data.subarray(out[0]!.offset, out[0]!.offset + 3)), [1, 2, 3]);
    await dist.allReduce(t, { async: true }).promise;
    await assert.rejects(dist.initProcessGroup({ rank: 0, worldSize: 1 }), /already initialised/);
    await dist.destroyProcessGroup();
    assert.equal(dist.isInitialized(), false);
    assert.throws(() => dist.allReduce(t), /not initialised; call `await dist.initProcessGroup\(\)` first/);
  });

  it("reports a port already taken, and cleans up after itself", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      await assert.rejects(
        dist.initProcessGroup({ initMethod: `tcp://127.0.0.1:${port}`, rank: 0, worldSize: 2, token: "tok", timeoutMs: 10_000 }),
        new RegExp(`cannot host the ringtorch store on 127\\.0\\.0\\.1:${port}: the port is already in use`),
      );
    } finally {
      server.close();
    }
    assert.equal(dist.isInitialized(), false);
    assert.deepEqual(leftoverSegments([process.pid]), []);
  });

  it("refuses to run a reachable store without a token", async () => {
    const saved = process.env.RINGTORCH_STORE_TOKEN;
    delete process.env.RINGTORCH_STORE_TOKEN;
    try {
      await assert.rejects(
        dist.initProcessGroup({ initMethod: "tcp://10.255.255.1:29500", rank: 1, worldSize: 2, timeoutMs: 2000 }),
        /no job token: the store at 10\.255\.255\.1:29500 is reachable from other machines.*RINGTORCH_STORE_TOKEN/,
      );
    } finally {
      if (saved !== undefined) process.env.RINGTORCH_STORE_TOKEN = saved;
    }
  });

  it("transport handshakes refuse a peer without the job token", async () => {
    const native = loadCommNative();
    for (const [token, ok] of [["job-secret", true], ["guess", false]] as const) {
      const worker = spawnWorker(siblingModule(import.meta.url, "./workers/acceptor"), { workerData: { token: "job-secret" } });
      const messages: Record<string, unknown>[] = [];
      const next = () => new Promise<Record<string, unknown>>((r) => (messages.length ? r(messages.shift()!) : worker.once("message", r)));
      const { port } = (await next()) as { port: number };
      const fd = native.tcpConnect("127.0.0.1", port, 2000, 0) as number;
      assert.equal(typeof fd, "number");
      if (ok) {
        connectHandshake(native, fd, token, 1, 0, 0, 5000);
        assert.deepEqual(await next(), { from: 1 });
      } else {
        // The acceptor proves itself first: the connector stops there and tells it nothing.
        assert.throws(() => connectHandshake(native, fd, token, 1, 0, 0, 5000), /could not prove it holds the job token/);
        native.closeFd(fd);
        const m = await next();
        assert.match(String(m.refused), /closed the connection during the handshake/);
      }
      if (ok) native.closeFd(fd);
      await worker.terminate();
    }
  });
});

describe("initProcessGroup across processes", () => {
  it("tcp:// with explicit ranks, listening only on the address asked for", async () => {
    const port = await freePort();
    const results = await launch({
      world: 3,
      script: "init_methods.ts",
      env: { INIT_METHOD: `tcp://127.0.0.1:${port}`, RINGTORCH_TRANSPORT: "tcp", RANK: "", WORLD_SIZE: "" },
      rankEnv: (r) => ({ MY_RANK: String(r), MY_WORLD: "3" }),
    });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const r of results) {
      const res = r.result as { product: number[]; listening: string[]; world: number };
      assert.deepEqual(res.product, [6, 6]);
      assert.equal(res.world, 3);
      for (const a of res.listening) assert.equal(a, "127.0.0.1", `rank ${r.rank} listens on ${a}`);
    }
    assert.deepEqual((results[0]!.result as { listening: string[] }).listening, ["127.0.0.1"], "rank 0 hosts the store on MASTER_ADDR only");
  });

  it("ranks that open different numbers of TCP streams are told so before any collective", async () => {
    const results = await launch({
      world: 2,
      script: "init_methods.ts",
      env: { RINGTORCH_TRANSPORT: "tcp" },
      rankEnv: (r) => ({ RINGTORCH_TCP_STREAMS: String(2 + r) }),
    });
    for (const r of results) {
      assert.notEqual(r.code, 0, explain(results));
      assert.match(r.stderr, /opens \d TCP stream\(s\) per peer \(RINGTORCH_TCP_STREAMS\), but rank \d opens \d; set the same RINGTORCH_TCP_STREAMS for every rank/, explain(results));
    }
  });

  it("env:// without a token on one machine shares one through a private file", async () => {
    const results = await launch({ world: 2, script: "init_methods.ts", env: { RINGTORCH_STORE_TOKEN: "" } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    for (const r of results) assert.deepEqual((r.result as { product: number[] }).product, [2, 2]);
  });
});
