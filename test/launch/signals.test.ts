import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { eventually, isLive, liveInGroups, sleeperFixture, startRingrun, tempDir } from "./helpers.js";

/** Starts `nproc` sleeper workers and returns ringrun with every worker's and grandchild's pid once all are up. */
async function startSleepers(t: { after(fn: () => void): void }, nproc: number) {
  const out = tempDir(t);
  const running = startRingrun(["--standalone", "--nproc-per-node", String(nproc), "--term-timeout", "5", "--log-dir", join(out, "logs"), sleeperFixture, out]);
  // Whatever happens in the test, nothing it started outlives it.
  t.after(() => {
    running.child.kill("SIGKILL");
  });
  const files = Array.from({ length: nproc }, (_, r) => join(out, `pids${r}`));
  const up = await eventually(() => files.every((f) => existsSync(f) && readFileSync(f, "utf8").includes(" ")), 30_000);
  assert.ok(up, "the workers started");
  const pids = files.map((f) => readFileSync(f, "utf8").split(" ").map(Number) as [number, number]);
  const workers = pids.map(([worker]) => worker);
  t.after(() => {
    for (const pid of liveInGroups(workers)) process.kill(pid, "SIGKILL");
  });
  return { running, workers, grandchildren: pids.map(([, child]) => child) };
}

test("SIGINT to ringrun stops every worker and every process they started, and ringrun exits 130", async (t) => {
  const { running, workers, grandchildren } = await startSleepers(t, 2);
  assert.ok([...workers, ...grandchildren].every(isLive));
  const inGroups = liveInGroups(workers);
  // (tsx's esbuild service is in there too.)
  assert.ok([...workers, ...grandchildren].every((pid) => inGroups.includes(pid)), "each worker leads its own process group, with its child in it");
  running.child.kill("SIGINT");
  const result = await running.done;
  assert.equal(result.code, 130, result.stderr);
  assert.match(result.stderr, /received SIGINT \(2\); the job was stopped/);
  assert.deepEqual(liveInGroups(workers), [], "no process of any worker's group survives ringrun");
});

test("when ringrun itself is SIGKILLed its workers notice and take their process groups down", async (t) => {
  const { running, workers } = await startSleepers(t, 2);
  running.child.kill("SIGKILL");
  await running.done;
  const gone = await eventually(() => liveInGroups(workers).length === 0, 15_000);
  assert.ok(gone, `still alive after ringrun was killed: ${liveInGroups(workers).join(", ")}`);
});
