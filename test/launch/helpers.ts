import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
export { freePort } from "../distributed/harness.js";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const ringrunBin = join(repoRoot, "bin/ringrun.js");
export const workerFixture = join(repoRoot, "test/launch/fixtures/worker.ts");
export const sleeperFixture = join(repoRoot, "test/launch/fixtures/sleeper.ts");

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Running {
  readonly child: ChildProcess;
  readonly done: Promise<RunResult>;
}

/** Starts `node bin/ringrun.js ...args`; `done` resolves with its exit and output. */
export function startRingrun(args: readonly string[], env: NodeJS.ProcessEnv = {}, command: readonly string[] = []): Running {
  const base = { ...process.env };
  // The test runner's own variables must not leak in as a cluster layout.
  for (const key of ["RINGTORCH_STORE_TOKEN", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID"]) delete base[key];
  const child = spawn(command[0] ?? process.execPath, [...command.slice(1), ringrunBin, ...args], {
    cwd: repoRoot,
    env: { ...base, RINGTORCH_QUIET: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const done = new Promise<RunResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function runRingrun(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return startRingrun(args, env).done;
}

/** A fresh folder, removed when the test ends. */
export function tempDir(t: { after(fn: () => void): void }, prefix = "ringrun-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function readJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** A port nobody listens on right now. */
/**
 * Live (non-zombie) processes whose process group is one of `pgids`, read from /proc: a zombie
 * waiting for a reaper that may never come (PID 1 in a container) is already dead.
 */
export function liveInGroups(pgids: readonly number[]): number[] {
  const wanted = new Set(pgids);
  const live: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the parenthesised command name: state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state !== "Z" && wanted.has(Number(pgrp))) live.push(Number(name));
  }
  return live;
}

export function isLive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Polls `condition` every 50 ms; false if it never held within `limitMs` (a bound on a hang, not a timing check). */
export async function eventually(condition: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}
