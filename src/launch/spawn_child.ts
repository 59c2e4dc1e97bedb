import { readFileSync } from "node:fs";
import { deserialize } from "node:v8";
import { recordError } from "./error_file.js";

/**
 * The variables spawn() adds to ringrun's contract (worker_env.ts) for its children: which rank
 * this process is, the function it must call (by name, checked), and the file holding the
 * arguments (structured-clone serialized, readable by this user only).
 */
export const SPAWN_RANK_ENV = "RINGTORCH_SPAWN_RANK";
export const SPAWN_FN_ENV = "RINGTORCH_SPAWN_FN";
export const SPAWN_ARGS_ENV = "RINGTORCH_SPAWN_ARGS";

/** The rank this process was spawned to run, or undefined in a process spawn() did not start. */
export function spawnedRank(): number | undefined {
  const raw = process.env[SPAWN_RANK_ENV];
  return raw === undefined || !/^\d+$/.test(raw) ? undefined : Number(raw);
}

/**
 * In a child: runs `fn(rank, ...args)` and ends the process, so that the script's code after its
 * spawn() call (meant for the parent) never runs here. The markers are removed first, so a spawn()
 * inside `fn` starts processes of its own. The output is flushed before exiting; a failure is
 * written to the error file for the parent to report, with its stack.
 */
export async function runSpawnedChild(fn: (rank: number, ...args: never[]) => unknown): Promise<never> {
  const rank = spawnedRank()!;
  const expected = process.env[SPAWN_FN_ENV] ?? "";
  const argsFile = process.env[SPAWN_ARGS_ENV] ?? "";
  delete process.env[SPAWN_RANK_ENV];
  delete process.env[SPAWN_FN_ENV];
  delete process.env[SPAWN_ARGS_ENV];
  let code = 0;
  try {
    if (fn.name !== expected) {
      throw new Error(
        `spawn: process ${rank} re-ran the main script and reached spawn(${fn.name || "<anonymous>"}) before spawn(${expected || "<anonymous>"}); ` +
          "the code before the parent's spawn() call must take the same path in every process",
      );
    }
    const args = deserialize(readFileSync(argsFile)) as never[];
    await fn(rank, ...args);
  } catch (error) {
    recordError(error);
    code = 1;
  }
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
