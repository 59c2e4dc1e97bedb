#!/usr/bin/env node
// Runs every test file under test/ (or those given as arguments) with Node's test runner,
// with tsx loading TypeScript. Node 20's --test takes no globs, so the files are listed here.
//
// Files that start no process or thread of their own share a few processes: each Node process
// that loads the library through tsx's loader spends 1.5-2 s of CPU on it (a round trip to the
// loader's thread per module), which for ~90 such files was two thirds of their CPU time
// (366 against 129 s of CPU for the same 2144 tests). Files that start processes or threads keep
// a process each, so that what they leave (signal handlers, exit hooks, children) stays theirs.
// RINGTORCH_TEST_ISOLATE=1 gives every file its own process, to rule out one file disturbing another.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { compileTestHelpers, newRunId, removeCompiled, removeLeftovers, staleDist } from "./test-children.js";

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

// What makes a file run alone: it or a test helper it imports (followed through relative
// imports inside test/) starts processes or threads, or names something that does (ringrun,
// the distributed harness's launch, spawn(), DataParallel's worker threads). Broad on purpose:
// a file wrongly kept alone costs a start-up, one wrongly shared could disturb the others.
// Also alone: a file that sets the environment (the library reads some of it once, at import)
// or asks for it with a `run-tests: own process` comment (one that measures process-wide memory).
const STARTS_PROCESSES = /child_process|worker_threads|\bWorker\(|\blaunch\(|\bspawn|\bexec(File)?\(|ringrun|DataParallel/;
const OWN_PROCESS = /process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env|run-tests: own process/;
const RELATIVE_IMPORT = /from\s+["'](\.{1,2}\/[^"']+)["']/g;
const testRoot = resolve("test");

function needsOwnProcess(file, seen = new Set()) {
  const path = resolve(file);
  if (seen.has(path) || !path.startsWith(testRoot + sep) || !existsSync(path)) return false;
  seen.add(path);
  const source = readFileSync(path, "utf8");
  if (STARTS_PROCESSES.test(source) || OWN_PROCESS.test(source)) return true;
  for (const [, spec] of source.matchAll(RELATIVE_IMPORT)) {
    if (needsOwnProcess(resolve(dirname(path), spec.replace(/\.js$/, ".ts")), seen)) return true;
  }
  return false;
}

// One entry per group: each file's tests under a suite named after the file, imported in turn.
function writeGroup(dir, index, files) {
  const entry = join(dir, `group${index}.test.mjs`);
  const lines = [
    'import { describe } from "node:test";',
    `const files = ${JSON.stringify(files.map((f) => [relative(process.cwd(), f), pathToFileURL(resolve(f)).href]), null, 1)};`,
    "for (const [name, url] of files) describe(name, async () => { await import(url); });",
  ];
  writeFileSync(entry, lines.join("\n") + "\n");
  return entry;
}

const given = process.argv.slice(2);
const files = given.length > 0 ? given.flatMap((p) => (statSync(p).isDirectory() ? findTests(p) : [p])) : findTests("test");
const concurrency = Number(process.env.TEST_CONCURRENCY ?? "2");
const isolate = process.env.RINGTORCH_TEST_ISOLATE === "1";
const shared = isolate ? [] : files.filter((f) => !needsOwnProcess(f));
const alone = files.filter((f) => !shared.includes(f));
const groupDir = mkdtempSync(join(tmpdir(), "ringtorch-tests-"));
// The processes the tests start run the test/ helpers compiled against dist/ when dist/ is up to
// date with src/ (scripts/test-children.js); RINGTORCH_TEST_FROM_SOURCE=1 keeps them on tsx.
const childEnv = {};
// Ctrl-C reaches the test processes too: the runner waits for them to end and then cleans up.
process.on("SIGINT", () => {});
let compiled = [];
let status = 1;
try {
  const stale = process.env.RINGTORCH_TEST_FROM_SOURCE === "1" ? "RINGTORCH_TEST_FROM_SOURCE=1" : staleDist(process.cwd());
  if (stale === null) {
    removeLeftovers(process.cwd());
    const runId = newRunId();
    compiled = await compileTestHelpers(process.cwd(), runId);
    childEnv.RINGTORCH_TEST_CHILD_JS = runId;
  } else {
    console.error(`run-tests: the tests' child processes load the sources through tsx (${stale}; \`npm run build\` makes them start faster)`);
  }
  // As many groups as files run at once, dealt round-robin so each mixes the folders; they go
  // first, so that the long multi-process files fill the slots after them.
  const groups = [];
  const count = shared.length > 1 ? Math.min(concurrency, shared.length) : 0;
  for (let g = 0; g < count; g++) groups.push(writeGroup(groupDir, g, shared.filter((_, i) => i % count === g)));
  const entries = count > 0 ? [...groups, ...alone] : files;
  // RINGTORCH_TEST_TIMES=<file> also writes each file's wall and CPU time there, one JSON line a
  // file (scripts/test-times.js): to see where the suite's minutes go.
  const times = process.env.RINGTORCH_TEST_TIMES;
  const reporters = times
    ? ["--test-reporter=spec", "--test-reporter-destination=stdout", `--test-reporter=${pathToFileURL(resolve("scripts/test-times.js")).href}`, `--test-reporter-destination=${times}`]
    : ["--test-reporter=spec"];
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=source", "--test", `--test-concurrency=${concurrency}`, ...reporters, ...entries],
    { stdio: "inherit", env: { ...process.env, RINGTORCH_QUIET: process.env.RINGTORCH_QUIET ?? "1", ...childEnv } },
  );
  status = result.status ?? 1;
} finally {
  rmSync(groupDir, { recursive: true, force: true });
  removeCompiled(compiled);
}
process.exit(status);
