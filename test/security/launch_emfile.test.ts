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
  /** Neither exited nor started every worker within LOAD_DEADLINE_MS (then it was killed). */
  readonly hung: boolean;
}

// Every worker of a run that can start them is up within a few seconds; a run still going
// after this is stuck.
const LOAD_DEADLINE_MS = 30_000;

/**
 * Whether the run failed in Node's or tsx's own loading, before any of ringrun's code ran. Short
 * of descriptors, Node's ESM loader fails to open a module (EMFILE), or tsx's loader thread fails
 * to start esbuild (a TypeError inside esbuild) or never answers (a silent hang). Under
 * scripts/run-tests.js with dist/ built, ringrun runs without tsx (bin/entry.js) and only the
 * first remains; a test file run by hand from the sources meets all three.
 */
function failedToLoad({ result, hung }: Outcome): boolean {
  if (/starting ranks|ringrun:/.test(result.stderr)) return false;
  if (hung) return result.stderr.trim() === "";
  return /EMFILE: too many open files, open '[^']+\.m?js'|node_modules\/(tsx|esbuild)\//.test(result.stderr);
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
    let hung = false;
    const deadline = Date.now() + LOAD_DEADLINE_MS;
    while (!exited) {
      await sleep(100);
      if (Date.now() > deadline) {
        hung = true;
        running.child.kill("SIGKILL");
        break;
      }
      // ringrun + NPROC workers + one child each: everything came up, the limit was high enough.
      if (liveMarked(marker).length >= 1 + 2 * NPROC) {
        allStarted = true;
        running.child.kill("SIGTERM");
        break;
      }
    }
    const result = await running.done;
    await eventually(() => liveMarked(marker).length === 0, 20_000);
    return { limit, result, allStarted, hung, survivors: liveMarked(marker) };
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
    if (failedToLoad(outcome)) continue;
    const { stderr, code } = outcome.result;
    assert.ok(!outcome.hung, `under ulimit -n ${limit} ringrun neither exited nor started its workers in ${LOAD_DEADLINE_MS} ms:\n${stderr}`);
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
