// Idle connections to the ranks' TCP transport listeners, opened by another OS user while the
// job sets up, must not keep it from starting (issue 21: four per listener failed a 3-rank
// job): accepted connections are handshaken at once, a silent one is dropped after about a
// second, and a connector whose attempt was dropped tries again.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostname } from "node:os";
import { it } from "node:test";
import { hostIdentity } from "../../src/distributed/engine/host_id.js";
import { TCPStore } from "../../src/distributed/store/tcp_store.js";
import { freePort } from "../distributed/harness.js";
import { asAttacker, exits, FIXTURES, listeningPorts, NOT_ROOT, Proc, startRanks } from "./helpers.js";

it("a 3-rank TCP job starts though another user holds idle and half-open connections to its listeners", { skip: asAttacker() ? false : NOT_ROOT }, async () => {
  const port = await freePort();
  const silent = Proc.start([...asAttacker()!, process.execPath, `${FIXTURES}idle_attacker.mjs`, "4", ""]);
  // The first bytes of a transport hello ("RTC3"), then nothing.
  const truncated = Proc.start([...asAttacker()!, process.execPath, `${FIXTURES}idle_attacker.mjs`, "2", "52544333"]);
  // Rank 2 joins only once ranks 0 and 1 listen and the attacker's connections are in place, so
  // that no rank can finish set-up before the attack. Ranks listen once every rank has said where
  // it runs: the test says it for rank 2 (its true host and pid) while rank 2 waits at the gate.
  const token = randomBytes(16).toString("hex");
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-sec-"));
  const gate = join(dir, "go");
  const ranks = startRanks(3, [0, 1, 2], "rank.ts", port, token, {
    RINGTORCH_TRANSPORT: "tcp",
    DELAY_RANK: "2",
    GATE_FILE: gate,
    INIT_TIMEOUT_MS: "45000",
  });
  const store = await TCPStore.connect({ host: "127.0.0.1", port, token, timeoutMs: 60_000 });
  await store.set("ringtorch/pg0/mesh/2/host", JSON.stringify({ host: hostIdentity(), hostname: hostname(), pid: ranks[2]!.child.pid }));
  await store.close();
  const attacked = new Set<number>();
  let openedInTime: number | undefined;
  const opened = () => silent.count(/^OPENED/) + truncated.count(/^OPENED/);
  const giveUp = Date.now() + 60_000;
  const watcher = setInterval(() => {
    if (openedInTime === undefined && ((attacked.size >= 2 && opened() >= 12) || Date.now() > giveUp)) {
      openedInTime = opened();
      writeFileSync(gate, "");
    }
    for (const r of ranks.slice(0, 2)) {
      for (const p of listeningPorts(r.child.pid!)) {
        if (p === port || attacked.has(p)) continue;
        attacked.add(p);
        silent.child.stdin!.write(`${p}\n`);
        truncated.child.stdin!.write(`${p}\n`);
      }
    }
  }, 10);
  let codes;
  try {
    codes = await exits(ranks, 120_000);
  } finally {
    clearInterval(watcher);
    await silent.stop();
    await truncated.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const explain = ranks.map((r, i) => `--- rank ${i} exited ${codes[i]}\n${r.lines.join("\n")}\n${r.stderr}`).join("\n");
  assert.deepEqual(codes, [0, 0, 0], explain);
  for (const r of ranks) {
    const result = JSON.parse(r.lines.find((l) => l.startsWith("RESULT "))!.slice(7)) as { product: number[]; transports: string[] };
    assert.deepEqual(result.product, [6, 6]);
    assert.ok(!result.transports.includes("shm"));
  }
  assert.ok(attacked.size >= 2, `the attack reached ${attacked.size} transport listener(s), expected ranks 0 and 1's`);
  assert.ok((openedInTime ?? 0) >= 12, `only ${openedInTime} idle connections were open before the job could finish set-up`);
});
