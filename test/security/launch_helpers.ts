import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { eventually, sleeperFixture, startRingrun, type Running } from "../launch/helpers.js";

/**
 * Every process a test's ringrun starts inherits a unique variable, so that survivors are found
 * however they ended up: in a process group of their own, reparented to init or to a subreaper.
 */
export function newMarker(): { name: string; value: string } {
  return { name: "RINGTORCH_TEST_MARK", value: randomUUID() };
}

/** Live (non-zombie) pids whose environment carries the marker, read from /proc. */
export function liveMarked(marker: { name: string; value: string }): number[] {
  const needle = `${marker.name}=${marker.value}\0`;
  const live: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`, "latin1").includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z") live.push(Number(name));
    } catch {
      // Gone while we looked, or another user's.
    }
  }
  return live;
}

export function killMarked(marker: { name: string; value: string }): void {
  for (const pid of liveMarked(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

export interface KillTrial {
  readonly delayMs: number;
  /** Marked processes alive just before the kill: ringrun, its workers, their children. */
  readonly before: number;
  /** Pids still alive `limitMs` after the kill (empty when none survived). */
  readonly survivors: readonly number[];
}

/**
 * One trial: starts ringrun with `nproc` sleepers (each starts a child of its own), waits until
 * its workers exist, SIGKILLs ringrun `delayMs` after that, and waits up to `limitMs` for every
 * process it started to be gone: a bound on a hang (a worker left waiting in init), not a timing
 * check. Whatever survives is killed before returning.
 */
export async function killTrial(delayMs: number, options: { nproc?: number; limitMs?: number; outDir: string }): Promise<KillTrial> {
  const marker = newMarker();
  let running: Running | undefined;
  try {
    running = startRingrun(["--standalone", "--nproc-per-node", String(options.nproc ?? 2), sleeperFixture, options.outDir], {
      RINGTORCH_QUIET: "0",
      [marker.name]: marker.value,
    });
    const child = running.child;
    let stderr = "";
    child.stderr!.on("data", (d: Buffer | string) => (stderr += String(d)));
    // The moment both worker processes exist (spawned, not yet loaded): ringrun prints its line
    // just before spawning, and under load the spawns themselves can take a while.
    const nproc = options.nproc ?? 2;
    const started = await eventually(() => (/starting ranks/.test(stderr) && liveMarked(marker).length >= 1 + nproc) || child.exitCode !== null, 60_000);
    if (!started || child.exitCode !== null) throw new Error(`ringrun did not start its workers: ${stderr}`);
    await sleep(delayMs);
    const before = liveMarked(marker).length;
    child.kill("SIGKILL");
    await running.done;
    const limitMs = options.limitMs ?? 20_000;
    await eventually(() => liveMarked(marker).length === 0, limitMs);
    return { delayMs, before, survivors: liveMarked(marker) };
  } finally {
    running?.child.kill("SIGKILL");
    killMarked(marker);
  }
}
