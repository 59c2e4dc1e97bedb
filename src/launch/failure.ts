import { existsSync } from "node:fs";
import { readErrorFile } from "./error_file.js";
import { describeSignal } from "./signals.js";
import type { WorkerExit } from "./worker_group.js";

/** One failed worker, as plain JSON so that nodes can hand it to each other through the store. */
export interface FailureRecord {
  readonly host: string;
  readonly nodeRank: number;
  readonly rank: number;
  readonly localRank: number;
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly spawnError: string | undefined;
  /** The error file's timestamp when the worker left one, else when ringrun saw the exit. */
  readonly timestamp: string;
  readonly error: { readonly type: string; readonly message: string; readonly stack: string | undefined } | undefined;
  readonly errorFile: string | undefined;
  readonly stdoutLog: string | undefined;
  readonly stderrLog: string | undefined;
}

export function failureFromExit(exit: WorkerExit, host: string, nodeRank: number): FailureRecord {
  const recorded = readErrorFile(exit.logs.errorFile);
  return {
    host,
    nodeRank,
    rank: exit.rank,
    localRank: exit.localRank,
    pid: exit.pid,
    exitCode: exit.exitCode,
    signal: exit.signal,
    spawnError: exit.spawnError,
    timestamp: recorded?.timestamp ?? exit.at.toISOString(),
    error: recorded === undefined ? undefined : { type: recorded.type, message: recorded.message, stack: recorded.stack },
    errorFile: recorded === undefined ? undefined : exit.logs.errorFile,
    stdoutLog: exit.toFile.stdout && existsSync(exit.logs.stdout) ? exit.logs.stdout : undefined,
    stderrLog: exit.toFile.stderr && existsSync(exit.logs.stderr) ? exit.logs.stderr : undefined,
  };
}

/** The earliest failure: the others are usually its echo (peers timing out on the dead rank). */
export function rootCause(failures: readonly FailureRecord[]): FailureRecord | undefined {
  let first: FailureRecord | undefined;
  for (const f of failures) if (first === undefined || Date.parse(f.timestamp) < Date.parse(first.timestamp)) first = f;
  return first;
}

export function describeEnd(f: Pick<FailureRecord, "exitCode" | "signal" | "spawnError">): string {
  if (f.spawnError !== undefined) return `could not start: ${f.spawnError}`;
  if (f.signal !== null) return `killed by signal ${describeSignal(f.signal as NodeJS.Signals)}`;
  return `exit code ${f.exitCode}`;
}

export interface SummaryContext {
  readonly runId: string;
  readonly restartCount: number;
  readonly maxRestarts: number;
  readonly attemptDir: string | undefined;
  /** This node's rank: log paths of another node's failure are on that node's disk. */
  readonly nodeRank: number;
}

const STACK_LINES = 12;

/** The report ringrun prints when the job fails, root cause first (torchrun's ChildFailedError). */
export function formatFailureSummary(ctx: SummaryContext, root: FailureRecord, others: readonly FailureRecord[]): string {
  const lines = [
    `ringrun: the job failed (run id ${ctx.runId}, restart ${ctx.restartCount} of at most ${ctx.maxRestarts})`,
    "Root cause (first observed failure):",
    `  time       : ${root.timestamp}`,
    `  host       : ${root.host} (node ${root.nodeRank})`,
    `  rank       : ${root.rank} (local rank ${root.localRank})${root.pid === undefined ? "" : `, pid ${root.pid}`}`,
    root.signal !== null
      ? `  signal     : ${describeSignal(root.signal as NodeJS.Signals)}`
      : root.exitCode !== null
        ? `  exit code  : ${root.exitCode}`
        : "  status     : unknown",
  ];
  if (root.spawnError !== undefined) lines.push(`  start error: ${root.spawnError}`);
  if (root.error !== undefined) {
    const stack = (root.error.stack ?? `${root.error.type}: ${root.error.message}`).split("\n");
    lines.push(`  error      : ${stack[0]}`, ...stack.slice(1, STACK_LINES).map((l) => `               ${l.trim()}`));
  } else if (root.spawnError === undefined) {
    lines.push("  error      : <no error file: the worker exited without an uncaught exception; see its output>");
  }
  const where = root.nodeRank === ctx.nodeRank ? "" : ` (on ${root.host})`;
  if (root.errorFile !== undefined) lines.push(`  error file : ${root.errorFile}${where}`);
  if (root.stdoutLog !== undefined) lines.push(`  stdout log : ${root.stdoutLog}${where}`);
  if (root.stderrLog !== undefined) lines.push(`  stderr log : ${root.stderrLog}${where}`);
  if (root.stdoutLog === undefined && root.stderrLog === undefined) {
    lines.push(`  output     : ${where === "" ? "on this console (use --redirects/--tee with --log-dir to keep it in files)" : `on the console of ${root.host}'s ringrun`}`);
  }
  if (ctx.attemptDir !== undefined) lines.push(`  this node's logs: ${ctx.attemptDir}`);
  if (others.length > 0) {
    lines.push("Other failures:");
    for (const f of others) {
      const message = f.error === undefined ? "" : `: ${f.error.type}: ${f.error.message.split("\n")[0]}`;
      lines.push(`  rank ${f.rank} (local rank ${f.localRank}) on ${f.host}: ${describeEnd(f)} at ${f.timestamp}${message}`);
    }
  }
  return lines.join("\n") + "\n";
}
