#!/usr/bin/env node
// Runs every test file under test/ (or those given as arguments) with Node's test runner,
// with tsx loading TypeScript. Node 20's --test takes no globs, so the files are listed here.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const given = process.argv.slice(2);
const files = given.length > 0 ? given.flatMap((p) => (statSync(p).isDirectory() ? findTests(p) : [p])) : findTests("test");
const concurrency = process.env.TEST_CONCURRENCY ?? "2";
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--conditions=source", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...files],
  { stdio: "inherit", env: { ...process.env, RINGTORCH_QUIET: process.env.RINGTORCH_QUIET ?? "1" } },
);
process.exit(result.status ?? 1);
