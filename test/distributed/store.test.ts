import assert from "node:assert/strict";
import { connect as netConnect } from "node:net";
import { freePort } from "./harness.js";
import { describe, it } from "node:test";
import { HashStore } from "../../src/distributed/store/hash_store.js";
import { PrefixStore } from "../../src/distributed/store/prefix_store.js";
import { bytesToString, type Store, StoreTimeoutError } from "../../src/distributed/store/store.js";
import { StoreAuthError, TCPStore, TCPStoreServer } from "../../src/distributed/store/tcp_store.js";
import { FrameWriter } from "../../src/distributed/store/protocol.js";

const TOKEN = "test-token-0123456789abcdef";
const text = (b: Uint8Array) => bytesToString(b);

async function withTcp(fn: (a: Store, b: Store, server: TCPStoreServer) => Promise<void>, log?: (m: string) => void) {
  const server = await TCPStoreServer.listen({ port: 0, token: TOKEN, log: log ?? (() => {}) });
  const a = await TCPStore.connect({ host: server.host, port: server.port, token: TOKEN, timeoutMs: 2000 });
  const b = await TCPStore.connect({ host: server.host, port: server.port, token: TOKEN, timeoutMs: 2000 });
  try {
    await fn(a, b, server);
  } finally {
    await a.close();
    await b.close();
    await server.close();
  }
}

/** The same expectations for every store: torch.distributed's Store semantics. */
async function semantics(a: Store, b: Store): Promise<void> {
  await a.set("k", "v1");
  assert.equal(text(await b.get("k")), "v1");
  await a.set("bin", new Uint8Array([0, 255, 7]));
  assert.deepEqual([...(await b.get("bin"))], [0, 255, 7]);

  assert.equal(await a.add("n", 5), 5);
  assert.equal(await b.add("n", -2), 3);
  assert.equal(text(await a.get("n")), "3");

  // compareSet: missing key with empty expected sets; mismatch returns the current value.
  assert.equal(text(await a.compareSet("c", "", "first")), "first");
  assert.equal(text(await a.compareSet("c", "nope", "second")), "first");
  assert.equal(text(await b.compareSet("c", "first", "second")), "second");
  assert.equal(text(await b.compareSet("missing", "x", "y")), "x");
  assert.equal(await a.check(["missing"]), false);

  // get blocks until another client sets the key.
  const pending = b.get("later", 2000);
  setTimeout(() => void a.set("later", "arrived"), 50);
  assert.equal(text(await pending), "arrived");

  const waiting = b.wait(["w1", "w2"], 2000);
  await a.set("w1", "1");
  assert.equal(await a.check(["w1", "w2"]), false);
  await a.set("w2", "2");
  await waiting;
  assert.equal(await b.check(["w1", "w2"]), true);

  await assert.rejects(b.get("never", 100), (e: Error) => e instanceof StoreTimeoutError && /never/.test(e.message));
  await assert.rejects(b.wait(["never2"], 100), StoreTimeoutError);

  const before = await a.numKeys();
  assert.equal(await a.deleteKey("k"), true);
  assert.equal(await a.deleteKey("k"), false);
  assert.equal(await b.numKeys(), before - 1);
}

describe("stores", () => {
  it("HashStore follows the Store semantics", async () => {
    const s = new HashStore();
    await semantics(s, s);
  });

  it("TCPStore follows the Store semantics across clients", async () => {
    await withTcp((a, b) => semantics(a, b));
  });

  it("PrefixStore keeps views apart over one store", async () => {
    await withTcp(async (a, b) => {
      const pa = new PrefixStore("g1", a);
      const pb = new PrefixStore("g2", b);
      await pa.set("x", "from g1");
      await pb.set("x", "from g2");
      assert.equal(text(await a.get("g1/x")), "from g1");
      assert.equal(text(await new PrefixStore("g2", a).get("x")), "from g2");
      await semantics(new PrefixStore("p", a), new PrefixStore("p", b));
    });
  });

  it("carries large values", async () => {
    await withTcp(async (a, b) => {
      const big = new Uint8Array(8 << 20);
      for (let i = 0; i < big.length; i += 4093) big[i] = i & 255;
      await a.set("big", big);
      const got = await b.get("big");
      assert.equal(got.length, big.length);
      assert.ok(Buffer.from(got).equals(Buffer.from(big)));
    });
  });

  it("refuses a client with a wrong token, and tells a client that skips the login nothing", async () => {
    const logged: string[] = [];
    await withTcp(
      async (a) => {
        await a.set("secret", "value");
        const server = a as TCPStore;
        await assert.rejects(
          TCPStore.connect({ host: server.host, port: server.port, token: "wrong", timeoutMs: 1000 }),
          (e: Error) => e instanceof StoreAuthError && /RINGTORCH_STORE_TOKEN/.test(e.message),
        );
        // A raw client that skips the login and asks for the key gets nothing at all, then EOF.
        const reply = await rawExchange(server.port, new FrameWriter().u8(3).u32(7).bytes("secret").u32(100).frame());
        assert.equal(reply.length, 0);
      },
      (m) => logged.push(m),
    );
    // The wrong-token client stopped at the server's proof: the server saw it leave, nothing to refuse.
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /refused a connection from 127\.0\.0\.1:\d+: it did not start with the store login/);
  });

  it("reports a port already taken clearly", async () => {
    const server = await TCPStoreServer.listen({ port: 0, token: TOKEN, log: () => {} });
    try {
      await assert.rejects(TCPStoreServer.listen({ port: server.port, token: TOKEN }), (e: Error) =>
        new RegExp(`127\\.0\\.0\\.1:${server.port}: the port is already in use`).test(e.message),
      );
    } finally {
      await server.close();
    }
  });

  it("requires a token to host or join", async () => {
    await assert.rejects(TCPStoreServer.listen({ port: 0, token: "" }), /non-empty job token/);
    await assert.rejects(TCPStore.connect({ host: "127.0.0.1", port: 1, token: "" }), /non-empty job token/);
  });

  it("retries until the server comes up, and names host:port when it never does", async () => {
    const port = await freePort();
    const connecting = TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 3000 });
    await new Promise((r) => setTimeout(r, 150));
    const server = await TCPStoreServer.listen({ port, token: TOKEN });
    const client = await connecting;
    await client.set("up", "1");
    await client.close();
    await server.close();

    const t0 = Date.now();
    await assert.rejects(
      TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 300 }),
      new RegExp(`127\\.0\\.0\\.1:${port} within 300 ms \\(last error: ECONNREFUSED\\)`),
    );
    assert.ok(Date.now() - t0 < 5000);
  });

  it("fails pending requests when the server goes away", async () => {
    const server = await TCPStoreServer.listen({ port: 0, token: TOKEN });
    const client = await TCPStore.connect({ host: server.host, port: server.port, token: TOKEN });
    const pending = client.get("never", 10_000);
    await server.close();
    await assert.rejects(pending, /closed|lost/);
  });
});

function rawExchange(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = netConnect({ host: "127.0.0.1", port }, () => s.write(payload));
    s.on("data", (c) => chunks.push(c));
    s.on("error", reject);
    s.on("close", () => resolve(Buffer.concat(chunks)));
  });
}

