import { createWriteStream, mkdirSync, rmSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

/** Where one worker's files live: <log-dir>/<run-id>/attempt_<n>/<local-rank>/. */
export interface WorkerLogPaths {
  readonly dir: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly errorFile: string;
}

/** Creates a fresh attempt folder; one left by an earlier run with the same run id is replaced, as torchrun does. */
export function prepareAttemptDir(logDir: string, runId: string, attempt: number): string {
  const dir = join(logDir, runId, `attempt_${attempt}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function workerLogPaths(attemptDir: string, localRank: number): WorkerLogPaths {
  const dir = join(attemptDir, String(localRank));
  mkdirSync(dir, { recursive: true });
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
  const sink: WriteStream | undefined = file === undefined ? undefined : createWriteStream(file, { flags: "a" });
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
      else sink.end(() => resolve());
    };
    source.once("end", finish);
    source.once("error", finish);
    source.once("close", finish);
  });
}
