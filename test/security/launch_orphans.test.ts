import assert from "node:assert/strict";
import { test } from "node:test";
import { tempDir } from "../launch/helpers.js";
import { killTrial } from "./launch_helpers.js";

// ringrun SIGKILLed at any moment after it starts its workers leaves no process behind: not a
// worker still loading (its preload runs after ringrun is gone), not one running, not a child
// of one. A handful of moments here; bench/launch_orphans.ts sweeps 0..1000 ms every 10 ms.
for (const delayMs of [0, 40, 150, 400, 1000]) {
  test(`ringrun SIGKILLed ${delayMs} ms after its workers exist leaves no process behind`, async (t) => {
    const trial = await killTrial(delayMs, { nproc: 2, outDir: tempDir(t) });
    assert.ok(trial.before >= 3, `ringrun and both workers were alive at the kill (found ${trial.before}; the sleepers never exit on their own)`);
    assert.deepEqual(trial.survivors, [], `processes outlived ringrun: ${trial.survivors.join(", ")}`);
  });
}
