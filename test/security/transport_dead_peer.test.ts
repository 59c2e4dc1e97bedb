// A peer on the same machine that exits while the process group is being set up is reported,
// by rank and pid, as soon as it is gone; its pid is in the store, so there is nothing to wait
// out (issue 21: it was waited for until the init timeout).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { TCPStore } from "../../src/distributed/store/tcp_store.js";
import { freePort } from "../distributed/harness.js";
import { exits, startRanks } from "./helpers.js";

it("rank 0 reports rank 1 by rank and pid when it dies during set-up, long before the init timeout", async () => {
  const port = await freePort();
  const token = randomBytes(16).toString("hex");
  // Rank 2 never comes, so ranks 0 and 1 wait in set-up; then rank 1 is killed.
  const [rank0, rank1] = startRanks(3, [0, 1], "rank.ts", port, token, { INIT_TIMEOUT_MS: "600000" });
  const store = await TCPStore.connect({ host: "127.0.0.1", port, token, timeoutMs: 60_000 });
  await store.wait(["ringtorch/pg0/mesh/1/host"], 60_000);
  await store.close();
  rank1!.child.kill("SIGKILL");
  // Far less than the 10-minute init timeout: reaching the guard means the death went unnoticed.
  const [code] = await exits([rank0!], 60_000);
  assert.notEqual(code, null, "rank 0 was still waiting for the dead rank");
  assert.notEqual(code, 0);
  assert.match(rank0!.stderr, new RegExp(`rank 1 \\(pid ${rank1!.child.pid} on [^)]+\\) exited while rank 0 was waiting`), rank0!.stderr);
});
