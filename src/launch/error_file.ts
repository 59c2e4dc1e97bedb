import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";

/**
 * The error file a failing worker leaves for ringrun (torchelastic's @record, for Node). ringrun
 * preloads a handler that records any uncaught exception or unhandled rejection automatically;
 * `record(main)` and `recordError(error)` are for scripts that catch errors themselves, or that
 * run without ringrun's preload (--no-python).
 */
export interface ErrorRecord {
  readonly type: string;
  readonly message: string;
  readonly stack: string | undefined;
  /** ISO 8601, when the error was recorded. */
  readonly timestamp: string;
  readonly rank: number | null;
  readonly localRank: number | null;
  readonly host: string;
  readonly pid: number;
}

// A symbol from the global registry, so that the preload's copy of this module and the one a
// script imports (possibly built vs source) agree that an error was already written.
const RECORDED = Symbol.for("ringtorch.launch.errorRecorded");

/**
 * Writes `error` to RINGTORCH_ERROR_FILE (or `path`), synchronously so that it also works in
 * the last moments of a crashing process. The first error of a process wins: it is the root
 * cause, and later ones are usually its consequences. Returns the path written, if any.
 */
export function recordError(error: unknown, path = process.env.RINGTORCH_ERROR_FILE ?? process.env.TORCHELASTIC_ERROR_FILE): string | undefined {
  if (path === undefined || path === "") return undefined;
  if (typeof error === "object" && error !== null) {
    if ((error as Record<symbol, unknown>)[RECORDED] === true) return undefined;
    try {
      Object.defineProperty(error, RECORDED, { value: true });
    } catch {
      // A frozen error object is still recorded; it may just be written twice in theory.
    }
  }
  let fd: number;
  try {
    // Only the owner may read it: an error message can carry paths, data or secrets.
    fd = openSync(path, "wx", 0o600);
  } catch {
    return undefined;
  }
  try {
    writeSync(fd, JSON.stringify(describeError(error), null, 2) + "\n");
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Runs `main`, recording whatever it throws before passing it on. */
export async function record<T>(main: () => T | Promise<T>): Promise<T> {
  try {
    return await main();
  } catch (error) {
    recordError(error);
    throw error;
  }
}

export function describeError(error: unknown): ErrorRecord {
  const isError = error instanceof Error;
  return {
    type: isError ? error.name : typeof error,
    message: isError ? error.message : String(error),
    stack: isError ? error.stack : undefined,
    timestamp: new Date().toISOString(),
    rank: intFromEnv("RANK"),
    localRank: intFromEnv("LOCAL_RANK"),
    host: hostname(),
    pid: process.pid,
  };
}

/** The record a worker left, or undefined when there is none or it cannot be read. */
export function readErrorFile(path: string): ErrorRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<ErrorRecord>;
    if (typeof parsed.message !== "string" || typeof parsed.timestamp !== "string") return undefined;
    return parsed as ErrorRecord;
  } catch {
    return undefined;
  }
}

function intFromEnv(name: string): number | null {
  const value = process.env[name];
  return value === undefined || !/^\d+$/.test(value) ? null : Number(value);
}
