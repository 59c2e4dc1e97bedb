// The store login against the attacks of the audit (issue 21): a process squatting on the
// store's or the rendezvous port, run as another OS user, must learn nothing from the job's
// clients (it records every byte they send), and the clients must refuse it and say so; a
// recorded login can be neither replayed nor reflected.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, connect as netConnect, type Server } from "node:net";
import { describe, it } from "node:test";
import * as dist from "../../src/distributed/index.js";
import { bytesToString } from "../../src/distributed/store/store.js";
import { StoreAuthError, TCPStore, TCPStoreServer } from "../../src/distributed/store/tcp_store.js";
import { runRingrun, workerFixture } from "../launch/helpers.js";
import { asAttacker, FIXTURES, NOT_ROOT, Proc, recorded, tokenForms } from "./helpers.js";
import { CLIENT_LABEL, frame, logIn, proof, Raw, SERVER_LABEL, u32 } from "./login_client.js";

const TOKEN = randomBytes(32).toString("hex");
const SQUATTED = /did not prove that it holds this job's token.*Someone else may hold the port/s;

async function squat(mode: string, port = 0): Promise<{ squatter: Proc; port: number }> {
  const squatter = Proc.start([...asAttacker()!, process.execPath, `${FIXTURES}squatter.mjs`, String(port), mode]);
  const m = await squatter.line(/^PORT (\d+)$/);
  return { squatter, port: Number(m[1]) };
}

/** What a client may send before the server has proven itself: one HELLO with a random 16-byte nonce, per connection. */
function assertOnlyHellos(squatter: Proc): void {
  const conns = recorded(squatter);
  assert.ok(conns.length >= 1, "the client connected to the squatter");
  for (const bytes of conns) {
    for (const form of tokenForms(TOKEN)) assert.ok(!bytes.includes(form), "the squatter received the token");
    assert.equal(bytes.length, 29, `a client sent ${bytes.length} bytes, not one 29-byte HELLO: ${bytes.toString("hex")}`);
    assert.equal(bytes.readUInt32LE(0), 25);
    assert.equal(bytes[4], 1, "command HELLO");
    assert.equal(bytes.readUInt32LE(9), 16, "a 16-byte nonce");
  }
}

describe("a squatter on the store's port", { skip: asAttacker() ? false : NOT_ROOT }, () => {
  for (const mode of ["forge", "echo", "garbage"]) {
    it(`(${mode}) gets only a random nonce, and the client refuses it, saying so`, async () => {
      const { squatter, port } = await squat(mode);
      try {
        await assert.rejects(TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 10_000 }), (e: Error) => {
          assert.ok(e instanceof StoreAuthError, e.message);
          assert.match(e.message, SQUATTED);
          assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
          return true;
        });
      } finally {
        await squatter.stop();
      }
      assertOnlyHellos(squatter);
    });
  }

  it("(silent) gets only nonces while the client retries, then the client gives up", async () => {
    const { squatter, port } = await squat("silent");
    try {
      await assert.rejects(
        TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 3000 }),
        /left the login unanswered|did not answer the store login/,
      );
    } finally {
      await squatter.stop();
    }
    assertOnlyHellos(squatter);
  });

  it("a rank whose MASTER_PORT is squatted stops with the clear error", async () => {
    const { squatter, port } = await squat("forge");
    try {
      await assert.rejects(
        dist.initProcessGroup({ initMethod: `tcp://127.0.0.1:${port}`, rank: 1, worldSize: 2, token: TOKEN, timeoutMs: 10_000 }),
        SQUATTED,
      );
    } finally {
      await squatter.stop();
    }
    assertOnlyHellos(squatter);
  });

  for (const layout of ["static node rank 1", "c10d"]) {
    it(`ringrun (${layout}) refuses a rendezvous port held by someone else and says so`, async () => {
      const { squatter, port } = await squat("forge");
      const flags =
        layout === "c10d"
          ? ["--rdzv-backend", "c10d", "--rdzv-endpoint", `127.0.0.1:${port}`, "--nnodes", "1:2"]
          : ["--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port", String(port)];
      let result;
      try {
        result = await runRingrun([...flags, "--nproc-per-node", "1", "--rdzv-conf", "join_timeout=20", workerFixture, "/nonexistent"], {
          RINGTORCH_STORE_TOKEN: TOKEN,
        });
      } finally {
        await squatter.stop();
      }
      assert.notEqual(result.code, 0, result.stderr);
      assert.match(result.stderr, /rendezvous failed/);
      assert.match(result.stderr, SQUATTED);
      assertOnlyHellos(squatter);
    });
  }
});

describe("the login on the wire", () => {
  it("never carries the token, and a recorded login can be neither replayed nor reflected", async () => {
    const logged: string[] = [];
    const server = await TCPStoreServer.listen({ port: 0, token: TOKEN, log: (m) => logged.push(m) });
    const { proxy, toServer, toClient } = await recordingProxy(server.port);
    const proxyPort = (proxy.address() as { port: number }).port;
    const client = await TCPStore.connect({ host: "127.0.0.1", port: proxyPort, token: TOKEN, timeoutMs: 5000 });
    try {
      await client.set("k", "v");
      for (const form of tokenForms(TOKEN)) {
        assert.ok(!Buffer.concat(toServer).includes(form), "the client sent the token");
        assert.ok(!Buffer.concat(toClient).includes(form), "the server sent the token");
      }

      // A login written from the protocol's description works (the test's client is sound)...
      const good = await logIn(server.port, TOKEN);
      // GET: [u8 3][u32 id][bytes key][u32 timeout ms]
      const get = Buffer.concat([Buffer.from([3]), u32(5), u32(1), Buffer.from("k"), u32(100)]);
      good.socket.write(Buffer.concat([u32(get.length), get]));
      await good.until(() => good.received.length >= 4 + 9 + 1, "the value of k");
      assert.equal(good.received.subarray(13).toString(), "v");
      good.socket.destroy();

      // ...but the client's recorded bytes replayed on a new connection get a fresh nonce and are dropped.
      const recordedLogin = Buffer.concat(toServer);
      const replay = await Raw.open(server.port);
      replay.socket.write(recordedLogin.subarray(0, 29));
      await replay.until(() => replay.received.length >= 65, "the server's half of the login");
      assert.ok(!replay.received.subarray(13, 29).equals(Buffer.concat(toClient).subarray(13, 29)), "the server's nonce is fresh");
      replay.received = Buffer.alloc(0);
      replay.socket.write(recordedLogin.subarray(29, 29 + 4 + 9 + 32));
      await replay.whenClosed("the server to drop the replay");
      assert.equal(replay.received.length, 0, "the replayed proof got an answer");

      // Reflection: the server's own proof sent back as the client's.
      const reflect = await Raw.open(server.port);
      const nonceC = randomBytes(16);
      reflect.socket.write(frame(1, 0, nonceC));
      await reflect.until(() => reflect.received.length >= 65, "the server's login answer");
      const nonceS = reflect.received.subarray(13, 29);
      const proofS = reflect.received.subarray(33, 65);
      assert.ok(proofS.equals(proof(TOKEN, SERVER_LABEL, nonceC, nonceS)), "the server's proof is as specified");
      assert.ok(!proofS.equals(proof(TOKEN, CLIENT_LABEL, nonceC, nonceS)));
      reflect.received = Buffer.alloc(0);
      reflect.socket.write(frame(11, 0, proofS));
      await reflect.whenClosed("the server to drop the reflection");
      assert.equal(reflect.received.length, 0, "the reflected proof got an answer");

      assert.equal(server.clientCount, 1, "only the genuine client is logged in");
      assert.equal(logged.filter((m) => /wrong proof/.test(m)).length, 2, logged.join("\n"));
      assert.equal(bytesToString(await client.get("k")), "v");
    } finally {
      await client.close();
      proxy.close();
      await server.close();
    }
  });
});

/** A TCP proxy to `port` that records both directions. */
async function recordingProxy(port: number): Promise<{ proxy: Server; toServer: Buffer[]; toClient: Buffer[] }> {
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  const proxy = createServer((c) => {
    const s = netConnect({ host: "127.0.0.1", port });
    c.on("data", (d) => (toServer.push(d), s.write(d)));
    s.on("data", (d) => (toClient.push(d), c.write(d)));
    c.on("close", () => s.destroy());
    s.on("close", () => c.destroy());
    c.on("error", () => {});
    s.on("error", () => {});
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return { proxy, toServer, toClient };
}
