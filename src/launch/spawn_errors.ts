import { describeEnd } from "./failure.js";
import type { ErrorRecord } from "./error_file.js";

/** A spawned process failed (torch.multiprocessing's ProcessException); `errorIndex` is its rank. */
export class ProcessException extends Error {
  override name = "ProcessException";
  constructor(
    message: string,
    readonly errorIndex: number,
    readonly pid: number | undefined,
  ) {
    super(message);
  }
}

/**
 * A spawned process threw: the message names its rank and carries the child's own stack, since
 * the error object itself lived in another process.
 */
export class ProcessRaisedException extends ProcessException {
  override name = "ProcessRaisedException";
  constructor(
    errorIndex: number,
    pid: number | undefined,
    /** What the child recorded: its error's type, message and stack. */
    readonly record: ErrorRecord,
  ) {
    const stack = record.stack ?? `${record.type}: ${record.message}`;
    super(`process ${errorIndex} (pid ${pid ?? "?"}) terminated with the following error:\n${stack.replace(/^/gm, "    ")}`, errorIndex, pid);
  }
}

/** A spawned process ended without an error of its own to report: a non-zero exit code or a signal. */
export class ProcessExitedException extends ProcessException {
  override name = "ProcessExitedException";
  constructor(
    errorIndex: number,
    pid: number | undefined,
    readonly exitCode: number | null,
    readonly signalName: NodeJS.Signals | null,
    spawnError?: string,
  ) {
    super(`process ${errorIndex} (pid ${pid ?? "?"}) terminated with ${describeEnd({ exitCode, signal: signalName, spawnError })}`, errorIndex, pid);
  }
}
