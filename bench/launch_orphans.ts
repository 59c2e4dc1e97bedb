// nice -n 10 node --import tsx --conditions=source bench/launch_orphans.ts [STEP_MS=10] [MAX_MS=1000] [NPROC=2]
// The long form of test/security/launch_orphans.test.ts: SIGKILLs ringrun at every STEP_MS from 0
// to MAX_MS after its worker processes exist, and counts the processes (workers, their children, tsx's
// esbuild) still alive 20 s later. Every line should read "0 survivors"; the last line sums up.
// A sweep, not a benchmark: there is no peer to compare with, and no time is taken for the record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killTrial } from "../test/security/launch_helpers.js";

const [stepMs = 10, maxMs = 1000, nproc = 2] = process.argv.slice(2).map(Number);
const outDir = mkdtempSync(join(tmpdir(), "ringrun-orphans-"));
let trials = 0;
let failed = 0;
try {
  for (let delay = 0; delay <= maxMs; delay += stepMs) {
    const trial = await killTrial(delay, { nproc, outDir });
    trials++;
    if (trial.survivors.length > 0) failed++;
    console.log(`kill at ${String(delay).padStart(5)} ms: ${trial.before} processes before, ${trial.survivors.length} survivors${trial.survivors.length ? ` (${trial.survivors.join(", ")})` : ""}`);
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
console.log(`${trials} trials, ${failed} with survivors`);
process.exitCode = failed === 0 ? 0 : 1;
