import { createWriteStream, lstatSync, mkdirSync, rmSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

/** Where one worker's files live: <log-dir>/<run-id>/attempt_<n>/<local-rank>/. */
export interface WorkerLogPaths {
  readonly dir: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly errorFile: string;
}

/** Folders ringrun creates for logs: only their owner can list or enter them (output may hold secrets). */
const DIR_MODE = 0o700;
/** Log and error files: only their owner can read them. */
export const FILE_MODE = 0o600;

/**
 * Creates a fresh attempt folder; one left by an earlier run with the same run id is replaced, as
 * torchrun does. The run id is checked to be a plain folder name where it is parsed; a run folder
 * that is a symbolic link is refused here, since replacing an attempt would delete through it.
 */
export function prepareAttemptDir(logDir: string, runId: string, attempt: number): string {
  const runDir = join(logDir, runId);
  mkdirSync(runDir, { recursive: true, mode: DIR_MODE });
  if (!lstatSync(runDir).isDirectory()) throw new Error(`the log folder ${runDir} is not a directory (a symbolic link?); ringrun will not write or delete through it`);
  const dir = join(runDir, `attempt_${attempt}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: DIR_MODE });
  return dir;
}

export function workerLogPaths(attemptDir: string, localRank: number): WorkerLogPaths {
  const dir = join(attemptDir, String(localRank));
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return { dir, stdout: join(dir, "stdout.log"), stderr: join(dir, "stderr.log"), errorFile: join(dir, "error.json") };
}

/**
 * The console prefix of a rank's lines, "[default0]:" as torchrun prints it. RINGTORCH_ (or
 * TORCHELASTIC_) LOG_LINE_PREFIX_TEMPLATE may replace it, with ${role_name}, ${rank}, ${local_rank}.
 */
export function linePrefix(role: string, rank: number, localRank: number, env: NodeJS.ProcessEnv): string {
  const template = env.RINGTORCH_LOG_LINE_PREFIX_TEMPLATE ?? env.TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE;
  if (template === undefined) return `[${role}${rank}]:`;
  return template.replace(/\$\{role_name\}/g, role).replace(/\$\{rank\}/g, String(rank)).replace(/\$\{local_rank\}/g, String(localRank));
}

/**
 * Copies one worker stream to its log file and/or the console, prefixing console lines with the
 * rank. A line split across chunks is held until its end arrives, so ranks' lines never interleave
 * mid-line on the console. Resolves once everything is written and the file is closed.
 */
export function routeStream(source: Readable, file: string | undefined, console: Writable | undefined, prefix: string): Promise<void> {
  const stream: WriteStream | undefined = file === undefined ? undefined : createWriteStream(file, { flags: "a", mode: FILE_MODE });
  let sink = stream;
  // A log file that cannot be opened or written (no descriptors left, disk full) must not end
  // ringrun: the output still reaches the console where it was shown, and the loss is said once.
  stream?.on("error", (error) => {
    if (sink !== undefined) process.stderr.write(`ringrun: cannot write ${file}: ${error.message}; this worker's output is no longer saved there\n`);
    sink = undefined;
  });
  let partial = "";
  source.setEncoding("utf8");
  source.on("data", (chunk: string) => {
    sink?.write(chunk);
    if (console === undefined) return;
    const text = partial + chunk;
    const lastNewline = text.lastIndexOf("\n");
    if (lastNewline < 0) {
      partial = text;
      return;
    }
    partial = text.slice(lastNewline + 1);
    const lines = text.slice(0, lastNewline).split("\n");
    console.write(lines.map((line) => `${prefix}${line}\n`).join(""));
  });
  return new Promise((resolve) => {
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (console !== undefined && partial !== "") console.write(`${prefix}${partial}\n`);
      partial = "";
      if (sink === undefined) resolve();
      else {
        sink.once("error", () => resolve());
        sink.end(() => resolve());
      }
    };
    source.once("end", finish);
    source.once("error", finish);
    source.once("close", finish);
  });
}
