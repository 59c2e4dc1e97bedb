// Connections that never log in, or flood the store, cost it little (issue 21): the login timer
// runs until success, anything unexpected before it is dropped without a reply, waiting logins
// are capped, a client that does not read its replies is not read from, refusals are logged at
// a bounded rate, and none of this keeps the hosting process from exiting.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { bytesToString } from "../../src/distributed/store/store.js";
import { RefusalLog } from "../../src/distributed/store/refusal_log.js";
import { TCPStore, TCPStoreServer } from "../../src/distributed/store/tcp_store.js";
import { nodeScriptArgs } from "../child_node.js";
import { asAttacker, FIXTURES, Proc } from "./helpers.js";
import { frame, logIn, Raw, u32 } from "./login_client.js";

const TOKEN = randomBytes(24).toString("hex");

async function withServer(opts: { helloTimeoutMs?: number; maxPendingLogins?: number }, fn: (s: TCPStoreServer, logged: string[]) => Promise<void>) {
  const logged: string[] = [];
  const server = await TCPStoreServer.listen({ port: 0, token: TOKEN, log: (m) => logged.push(m), ...opts });
  try {
    await fn(server, logged);
  } finally {
    await server.close();
  }
}

describe("connections that do not log in", () => {
  it("a truncated HELLO, or a HELLO without the proof, is dropped when the login timer runs out", async () => {
    await withServer({ helloTimeoutMs: 300 }, async (server, logged) => {
      const truncated = await Raw.open(server.port);
      truncated.socket.write(frame(1, 0, randomBytes(16)).subarray(0, 10));
      const halfway = await Raw.open(server.port);
      halfway.socket.write(frame(1, 0, randomBytes(16)));
      await truncated.whenClosed("the server to drop a truncated HELLO");
      await halfway.whenClosed("the server to drop a login without a proof");
      assert.equal(truncated.received.length, 0);
      assert.equal(halfway.received.length, 65, "only the server's half of the login");
      assert.equal(server.pendingLoginCount, 0);
      assert.equal(logged.filter((m) => /did not complete the login within 300 ms/.test(m)).length, 2, logged.join("\n"));
    });
  });

  it("anything unexpected before the login is dropped without a word", async () => {
    await withServer({}, async (server) => {
      const tiny = Buffer.concat(Array.from({ length: 100_000 }, () => Buffer.from([1, 0, 0, 0, 200])));
      const cases: [string, Buffer][] = [
        ["a request before the login", Buffer.concat([u32(13), Buffer.from([3]), u32(7), u32(1), Buffer.from("k"), u32(100)])],
        ["a frame larger than a login's", u32(1 << 20)],
        ["a HELLO with a 3-byte nonce", frame(1, 0, randomBytes(3))],
        ["a flood of tiny malformed frames", tiny],
        ["a PROVE without a HELLO", frame(11, 0, randomBytes(32))],
      ];
      for (const [what, bytes] of cases) {
        const raw = await Raw.open(server.port);
        raw.socket.write(bytes);
        await raw.whenClosed(`the server to drop ${what}`);
        assert.equal(raw.received.length, 0, `${what} got an answer`);
      }
      const wrong = await Raw.open(server.port);
      wrong.socket.write(frame(1, 0, randomBytes(16)));
      await wrong.until(() => wrong.received.length >= 65, "the server's half of the login");
      wrong.socket.write(frame(11, 0, randomBytes(32)));
      await wrong.whenClosed("the server to drop a wrong proof");
      assert.equal(wrong.received.length, 65, "a wrong proof got an answer");
      assert.equal(server.pendingLoginCount, 0);
      assert.equal(server.clientCount, 0);
    });
  });

  it("at most maxPendingLogins wait (another user's idle connections), a genuine client still gets in, and refusals are logged at a bounded rate", async () => {
    await withServer({ maxPendingLogins: 8 }, async (server, logged) => {
      const started = Date.now();
      const attacker = Proc.start([...(asAttacker() ?? []), process.execPath, `${FIXTURES}idle_attacker.mjs`, "40", ""]);
      attacker.child.stdin!.write(`${server.port}\n`);
      try {
        await attacker.line(/^OPENED/);
        await attacker.waitCount(/^CLOSED/, 32);
        assert.equal(attacker.count(/^CLOSED/), 32, "the server drops all but 8 of 40 idle connections");
        assert.ok(server.pendingLoginCount <= 8, `${server.pendingLoginCount} connections are waiting to log in`);
        const client = await TCPStore.connect({ host: "127.0.0.1", port: server.port, token: TOKEN, timeoutMs: 10_000 });
        await client.set("k", "v");
        assert.equal(bytesToString(await client.get("k")), "v");
        await client.close();
      } finally {
        await attacker.stop();
      }
      const windows = Math.ceil((Date.now() - started) / 10_000);
      assert.ok(logged.length >= 1 && logged.length <= 10 * windows, `${logged.length} lines logged in ${windows} window(s) of 10 s`);
    });
  });

  it("the refusal log holds back all but a burst per window, and counts what it held back", () => {
    const lines: string[] = [];
    let clock = 0;
    const log = new RefusalLog((m) => lines.push(m), 3, 10_000, () => clock);
    for (let i = 0; i < 100; i++) log.refused(`refusal ${i}`);
    assert.deepEqual(lines, ["refusal 0", "refusal 1", "refusal 2"]);
    clock = 10_000;
    log.refused("refusal 100");
    assert.equal(lines.length, 4);
    assert.equal(lines[3], "refusal 100 (and 97 more refusal(s) not logged)");
  });
});

describe("a store host under attack", () => {
  it("does not read from a client that does not read its replies, stays responsive, and exits by itself though refused clients never close", async () => {
    const host = Proc.start([process.execPath, "--expose-gc", ...nodeScriptArgs(`${FIXTURES}store_host.ts`, ["--import", "tsx"])], { ...process.env, STORE_TOKEN: TOKEN });
    const idle = Proc.start([...(asAttacker() ?? []), process.execPath, `${FIXTURES}idle_attacker.mjs`, "4", ""]);
    const refused = Proc.start([...(asAttacker() ?? []), process.execPath, `${FIXTURES}idle_attacker.mjs`, "4", "05000000c800000000"]);
    try {
      const port = Number((await host.line(/^PORT (\d+)$/))[1]);
      const mem = async () => {
        const before = host.count(/^MEM /);
        host.child.stdin!.write("mem\n");
        await host.waitCount(/^MEM /, before + 1);
        return Number(host.lines.filter((l) => l.startsWith("MEM ")).at(-1)!.slice(4));
      };
      const baseline = await mem();

      // A logged-in client asks for a 1 MiB value 4000 times in one write and reads nothing: a store
      // that answered it all would hold 4 GiB of answers.
      const setter = await TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 10_000 });
      await setter.set("big", new Uint8Array(1 << 20).fill(7));
      await setter.close();
      const flooder = await logIn(port, TOKEN);
      flooder.socket.pause();
      const get = (id: number) => {
        const body = Buffer.concat([Buffer.from([3]), u32(id), u32(3), Buffer.from("big"), u32(1000)]);
        return Buffer.concat([u32(body.length), body]);
      };
      flooder.socket.write(Buffer.concat(Array.from({ length: 4000 }, (_, i) => get(i + 1))));
      // ...and tiny malformed frames, each answered with an error.
      flooder.socket.write(Buffer.concat(Array.from({ length: 100_000 }, (_, i) => Buffer.concat([u32(5), Buffer.from([200]), u32(i)]))));
      idle.child.stdin!.write(`${port}\n`);
      refused.child.stdin!.write(`${port}\n`);
      await idle.line(/^OPENED/);
      await refused.line(/^CLOSED/);
      const grown = (await mem()) - baseline;
      assert.ok(grown < 96 << 20, `the store grew by ${grown >> 20} MiB`);

      const client = await TCPStore.connect({ host: "127.0.0.1", port, token: TOKEN, timeoutMs: 10_000 });
      await client.set("still", "here");
      assert.equal(bytesToString(await client.get("still")), "here");
      await client.close();

      host.child.stdin!.write("close\n");
      await host.line(/^CLOSED$/);
      const guard = setTimeout(() => host.child.kill("SIGKILL"), 30_000);
      const code = await host.exited;
      clearTimeout(guard);
      assert.equal(code, 0, `the store host did not exit by itself after closing (connections kept it alive): ${host.stderr}`);
      flooder.socket.destroy();
    } finally {
      host.child.kill("SIGKILL");
      await idle.stop();
      await refused.stop();
    }
  });
});
