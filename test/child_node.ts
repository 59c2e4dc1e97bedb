import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * What follows `node` on the command line of a test's child process that runs `script`, a
 * TypeScript file under test/. Under scripts/run-tests.js with an up-to-date dist/, the runner
 * compiled the script to plain JavaScript that imports dist/ (scripts/test-children.js), and the
 * child runs that with no module hook: 0.3 s of CPU to start instead of 0.6-2 s through tsx.
 * Otherwise (a stale build, a file run by hand) it is `sourceFlags` and the script itself.
 */
export function nodeScriptArgs(script: string, sourceFlags: readonly string[] = ["--import", "tsx", "--conditions=source"]): string[] {
  const runId = process.env.RINGTORCH_TEST_CHILD_JS;
  if (runId) {
    const compiled = join(dirname(script), `.${basename(script, ".ts")}.rt-${runId}.mjs`);
    if (existsSync(compiled)) return [compiled];
  }
  return [...sourceFlags, script];
}
