import { spawn, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import { removeStaleSegments } from "../distributed/engine/shm_names.js";
import { signalGroup } from "./signals.js";
import { routeStream, type WorkerLogPaths } from "./worker_output.js";

export interface WorkerSpec {
  readonly rank: number;
  readonly localRank: number;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly logs: WorkerLogPaths;
  readonly toFile: { readonly stdout: boolean; readonly stderr: boolean };
  /** Console streams for this worker's output, undefined where it must not reach the console. */
  readonly console: { readonly stdout: Writable | undefined; readonly stderr: Writable | undefined };
  readonly prefix: string;
}

export interface WorkerExit {
  readonly rank: number;
  readonly localRank: number;
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** When ringrun saw the exit. */
  readonly at: Date;
  /** Why the process could not be started at all (e.g. "spawn foo ENOENT"). */
  readonly spawnError?: string;
  readonly logs: WorkerLogPaths;
  readonly toFile: WorkerSpec["toFile"];
}

interface Worker {
  readonly spec: WorkerSpec;
  /** Undefined when spawn() itself threw. */
  readonly child: ChildProcess | undefined;
  exit: WorkerExit | undefined;
  outputDone: Promise<void>;
}

/**
 * The processes of one attempt on this node. Each worker leads its own process group (detached),
 * so stopping a worker reaches whatever it started too, and a terminal's Ctrl-C reaches ringrun
 * alone, which then stops the group in order. Slot 3 of each worker's stdio is the lifeline pipe
 * (see worker_preload.ts); stdin is /dev/null, since a background process group reading the
 * terminal would be stopped by SIGTTIN.
 */
export class WorkerGroup {
  private readonly workers: Worker[] = [];
  private readonly listeners = new Set<() => void>();

  /**
   * Starts the workers in order. Each joins the group the moment it exists, so that stop() and
   * kill() reach it whatever happens next; the first that cannot be started (no file descriptors
   * left, no such command) ends the spawning, and shows up as that rank's failure.
   */
  constructor(specs: readonly WorkerSpec[]) {
    for (const spec of specs) {
      const worker = this.startOne(spec);
      this.workers.push(worker);
      if (worker.child?.pid === undefined) break;
    }
  }

  get pids(): number[] {
    return this.workers.flatMap((w) => (w.child?.pid === undefined ? [] : [w.child.pid]));
  }

  exits(): WorkerExit[] {
    return this.workers.flatMap((w) => (w.exit === undefined ? [] : [w.exit]));
  }

  failures(): WorkerExit[] {
    return this.exits().filter((e) => e.exitCode !== 0);
  }

  get running(): number {
    return this.workers.filter((w) => w.exit === undefined).length;
  }

  /** Resolves when some worker exits, or after `timeoutMs`, whichever comes first. */
  waitForChange(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.listeners.add(done);
    });
  }

  /**
   * Sends `signal` to every worker's process group, waits up to `graceMs` for the workers to
   * exit, then SIGKILLs every group, including groups whose leader already exited but whose
   * children did not. Resolves when all output has been written.
   */
  async stop(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    for (const w of this.workers) if (w.exit === undefined && w.child?.pid !== undefined) signalGroup(w.child.pid, signal);
    const deadline = Date.now() + graceMs;
    while (this.running > 0 && Date.now() < deadline) await this.waitForChange(Math.min(100, deadline - Date.now()));
    this.kill();
    const hardDeadline = Date.now() + 5000;
    while (this.running > 0 && Date.now() < hardDeadline) await this.waitForChange(50);
    await this.drained();
  }

  /** SIGKILL to every group at once; safe to call from an exit handler. */
  kill(): void {
    for (const w of this.workers) if (w.child?.pid !== undefined) signalGroup(w.child.pid, "SIGKILL");
  }

  /**
   * Waits for the output of the workers that exited (all, once stopped) to reach its files and
   * the console; a grandchild keeping a pipe open does not hold this up for more than 2 s.
   */
  async drained(): Promise<void> {
    const exited = this.workers.filter((w) => w.exit !== undefined).map((w) => w.outputDone);
    await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  /**
   * Starts one worker. Listeners go on before anything else touches the child: when spawn fails
   * for lack of file descriptors (EMFILE) Node gives the child no stdio at all and reports the
   * error on the next tick, and an 'error' event without a listener would end ringrun itself.
   */
  private startOne(spec: WorkerSpec): Worker {
    let child: ChildProcess | undefined;
    let thrown: string | undefined;
    try {
      child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      });
    } catch (error) {
      thrown = (error as Error).message;
    }
    let outputDone: Promise<void> = Promise.resolve();
    const worker: Worker = { spec, child, exit: undefined, outputDone };
    const settle = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: string): void => {
      if (worker.exit !== undefined) return;
      // stdio is missing altogether when spawn failed for lack of descriptors.
      (child?.stdio?.[3] as { destroy(): void } | null | undefined)?.destroy();
      worker.exit = {
        rank: spec.rank,
        localRank: spec.localRank,
        pid: child?.pid,
        exitCode,
        signal,
        at: new Date(),
        spawnError,
        logs: spec.logs,
        toFile: spec.toFile,
      };
      // A rank that died during mesh set-up cannot unlink its shared-memory segments itself.
      removeStaleSegments();
      for (const listener of [...this.listeners]) listener();
    };
    if (child === undefined) {
      // Reported like an asynchronous spawn error, after the caller has the worker in its list.
      queueMicrotask(() => settle(127, null, explainSpawnError(thrown)));
      return worker;
    }
    child.once("exit", (code, signal) => settle(code, signal));
    child.once("error", (error) => settle(127, null, explainSpawnError(error.message)));
    if (child.stdout && child.stderr) {
      outputDone = Promise.all([
        routeStream(child.stdout, spec.toFile.stdout ? spec.logs.stdout : undefined, spec.console.stdout, spec.prefix),
        routeStream(child.stderr, spec.toFile.stderr ? spec.logs.stderr : undefined, spec.console.stderr, spec.prefix),
      ]).then(() => undefined);
      worker.outputDone = outputDone;
    }
    return worker;
  }
}

/** Spawn errors a user can act on get the action. */
function explainSpawnError(message: string | undefined): string {
  const text = message ?? "spawn failed";
  if (/\b(EMFILE|ENFILE)\b/.test(text)) {
    return `${text} (no file descriptors left: each worker needs about 4 in ringrun, plus 2 with log files; raise the limit, e.g. \`ulimit -n 4096\`)`;
  }
  return text;
}
