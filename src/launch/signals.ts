import { constants } from "node:os";

/** "SIGKILL (9)" for a signal name Node reports, so a summary shows both forms people search for. */
export function describeSignal(signal: NodeJS.Signals): string {
  const number = constants.signals[signal];
  return number === undefined ? signal : `${signal} (${number})`;
}

/** The shell convention for a process ended by a signal: 128 + the signal's number. */
export function exitCodeForSignal(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Sends a signal to a whole process group, ignoring a group that is already gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}
