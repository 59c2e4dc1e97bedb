// Runs an example script on tiny generated data: once as one process, then under ringrun on two
// ranks resuming from the first run's latest checkpoint (a changed world size included).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface Output {
  code: number | null;
  out: string;
}

/** Runs `node [ringrun …] example args` from the repository root; kills it after timeoutMs. */
export function runExample(script: string, args: string[], ranks: number, timeoutMs = 180_000): Promise<Output> {
  const argv = ranks === 1 ? ["--import", "tsx", "--conditions=source", script, ...args] : ["bin/ringrun.js", "--standalone", "--nproc-per-node", String(ranks), script, ...args];
  return runNode(argv, repoRoot, { RINGTORCH_NUM_THREADS: "1" }, timeoutMs);
}

/**
 * Runs `node argv` in `cwd` with the test runner's environment less its cluster layout (so that a
 * child does not join the runner's job), quiet, plus `extraEnv`; stdout and stderr together; kills
 * it after timeoutMs.
 */
export function runNode(argv: string[], cwd: string, extraEnv: NodeJS.ProcessEnv, timeoutMs: number): Promise<Output> {
  const env: NodeJS.ProcessEnv = { ...process.env, RINGTORCH_QUIET: "1", ...extraEnv };
  for (const key of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "RINGTORCH_STORE_TOKEN"]) delete env[key];
  const child = spawn(process.execPath, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

export function expectOk(r: Output, what: string): void {
  assert.equal(r.code, 0, `${what} exited with ${r.code}:\n${r.out.slice(-3000)}`);
}

/** A temporary folder holding `files`, removed after the test. */
export function workDir(t: { after(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-example-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return dir;
}

/** Numbers after `label` in every matching line, e.g. all "validation loss 5.62". */
export function valuesAfter(out: string, label: string): number[] {
  return [...out.matchAll(new RegExp(`${label} (-?[0-9.]+|NaN)`, "g"))].map((m) => Number(m[1]));
}
