import { rmSync } from "node:fs";
import type { TCPStoreServer } from "../distributed/store/tcp_store.js";
import { readErrorFile } from "./error_file.js";
import { exitCodeForSignal } from "./signals.js";
import { ProcessExitedException, ProcessRaisedException, type ProcessException } from "./spawn_errors.js";
import { WorkerGroup, type WorkerExit, type WorkerSpec } from "./worker_group.js";

const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/** How long the surviving processes get to exit on SIGTERM after one failed, before SIGKILL. */
const GRACE_MS = 3000;

/**
 * The processes of one spawn() (torch.multiprocessing.ProcessContext). `await join()` waits for
 * them; the first failure stops the others and is thrown. While it lives, a SIGINT, SIGTERM or
 * SIGHUP to this process stops every child (each leads its own process group, so whatever a child
 * started ends too) and then ends this process, as it would have ended without the handler.
 */
export class SpawnContext {
  private readonly group: WorkerGroup;
  private finished = false;
  private failure: ProcessException | null = null;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    void this.group.stop("SIGTERM", 1000).finally(() => {
      this.cleanUp();
      process.exit(exitCodeForSignal(signal));
    });
  };
  private readonly onExit = (): void => this.group.kill();

  constructor(
    specs: readonly WorkerSpec[],
    private readonly store: TCPStoreServer,
    private readonly dir: string,
  ) {
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
    process.on("exit", this.onExit);
    this.group = new WorkerGroup(specs);
  }

  /** Process ids, by rank. */
  pids(): number[] {
    return this.group.pids;
  }

  /**
   * Waits until every process has exited (true), or `timeoutMs` passes (false, as torch's
   * join(timeout)). Throws the first failure, after stopping the other processes.
   */
  async join(timeoutMs?: number): Promise<boolean> {
    if (this.failure) throw this.failure;
    if (this.finished) return true;
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    while (this.group.running > 0 && this.group.failures().length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await this.group.waitForChange(Math.min(left, 1000));
    }
    const failures = this.group.failures();
    if (failures.length > 0) {
      await this.group.stop("SIGTERM", GRACE_MS);
      this.failure = explain(failures.reduce((a, b) => (b.at < a.at ? b : a)));
    } else {
      await this.group.drained();
    }
    this.cleanUp();
    if (this.failure) throw this.failure;
    return true;
  }

  /** Stops every process now (SIGKILL to each process group). */
  kill(): void {
    this.group.kill();
  }

  private cleanUp(): void {
    if (this.finished) return;
    this.finished = true;
    for (const signal of STOP_SIGNALS) process.off(signal, this.onSignal);
    process.off("exit", this.onExit);
    this.group.kill();
    void this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function explain(exit: WorkerExit): ProcessException {
  const record = readErrorFile(exit.logs.errorFile);
  if (record) return new ProcessRaisedException(exit.rank, exit.pid, record);
  return new ProcessExitedException(exit.rank, exit.pid, exit.exitCode, exit.signal, exit.spawnError);
}
