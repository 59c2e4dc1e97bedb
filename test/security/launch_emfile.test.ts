import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { eventually, sleeperFixture, startRingrun, tempDir, type RunResult } from "../launch/helpers.js";
import { killMarked, liveMarked, newMarker } from "./launch_helpers.js";

const NPROC = 4;

interface Outcome {
  readonly limit: number;
  readonly result: RunResult;
  readonly allStarted: boolean;
}

/** ringrun under `ulimit -n limit` with NPROC sleepers; ends when ringrun exits or every worker is up (then ringrun is stopped). */
async function underLimit(limit: number, outDir: string): Promise<Outcome & { survivors: number[] }> {
  const marker = newMarker();
  const running = startRingrun(
    ["--standalone", "--nproc-per-node", String(NPROC), "--log-dir", `${outDir}/logs`, "--redirects", "3", sleeperFixture, outDir],
    { RINGTORCH_QUIET: "0", [marker.name]: marker.value },
    ["sh", "-c", `ulimit -n ${limit} && exec "$@"`, "sh", process.execPath],
  );
  try {
    let exited = false;
    void running.done.then(() => (exited = true));
    let allStarted = false;
    while (!exited) {
      await sleep(100);
      // ringrun + NPROC workers + one child each: everything came up, the limit was high enough.
      if (liveMarked(marker).length >= 1 + 2 * NPROC) {
        allStarted = true;
        running.child.kill("SIGTERM");
        break;
      }
    }
    const result = await running.done;
    await eventually(() => liveMarked(marker).length === 0, 20_000);
    return { limit, result, allStarted, survivors: liveMarked(marker) };
  } finally {
    running.child.kill("SIGKILL");
    killMarked(marker);
  }
}

test("out of file descriptors while spawning, ringrun reports that rank's start error, stops the workers it started, and exits 1", async (t) => {
  const outcomes: Outcome[] = [];
  // From too few descriptors for ringrun itself to load, upward until every worker starts; the
  // limits in between run out at some worker after others are already running.
  for (let limit = 24; limit <= 256; limit += 2) {
    const outDir = tempDir(t);
    const outcome = await underLimit(limit, outDir);
    assert.deepEqual(outcome.survivors, [], `under ulimit -n ${limit}, processes outlived ringrun: ${outcome.survivors.join(", ")}\n${outcome.result.stderr}`);
    outcomes.push(outcome);
    if (outcome.allStarted) break;
    const { stderr, code } = outcome.result;
    assert.doesNotMatch(stderr, /Unhandled 'error' event|TypeError/, `under ulimit -n ${limit} ringrun crashed:\n${stderr}`);
    if (/starting ranks/.test(stderr)) {
      assert.equal(code, 1, stderr);
      assert.match(stderr, /start error: spawn \S+ EMFILE \(no file descriptors left: .*ulimit -n/, stderr);
    }
  }
  assert.ok(outcomes.at(-1)!.allStarted, "some limit let every worker start");
  const midway = outcomes.filter((o) => /rank {7}: [1-9]/.test(o.result.stderr) && /EMFILE/.test(o.result.stderr));
  assert.ok(midway.length > 0, `some limit ran out after a worker had started:\n${outcomes.map((o) => `${o.limit}: ${o.result.stderr.split("\n").find((l) => /rank {7}|error/.test(l)) ?? o.result.code}`).join("\n")}`);
});
