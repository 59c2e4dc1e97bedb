import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serialize } from "node:v8";
import { TCPStoreServer } from "../distributed/store/tcp_store.js";
import { checkArity, checkOptions } from "../util/options.js";
import { childNodeFlags } from "./young_generation.js";
import { SpawnContext } from "./spawn_context.js";
import { runSpawnedChild, spawnedRank, SPAWN_ARGS_ENV, SPAWN_FN_ENV, SPAWN_RANK_ENV } from "./spawn_child.js";
import { workerPreloadUrl } from "./worker_command.js";
import { workerEnvironment } from "./worker_env.js";
import type { WorkerSpec } from "./worker_group.js";

export interface SpawnOptions<A extends unknown[]> {
  /** Number of processes (default 1). */
  nprocs?: number;
  /** Passed after the rank: fn(rank, ...args). Structured-cloneable values (numbers, strings, arrays, typed arrays, plain objects, Maps). */
  args?: A;
  /** Wait for every process (default true); false returns the SpawnContext at once. */
  join?: boolean;
}

/**
 * Starts `nprocs` processes running `fn(rank, ...args)` (torch.multiprocessing.spawn).
 *
 * How `fn` reaches the children: like Python's "spawn" start method and Node's cluster module,
 * each child re-runs this process's main script (same Node flags, same arguments). When a child
 * reaches the same spawn() call, it runs `fn` with its rank instead of starting processes, and
 * exits when `fn` settles, so the code after the call runs only in the parent. Code before the
 * call runs in every process, so keep it to definitions and imports (the `if __name__ ==
 * "__main__"` rule of PyTorch scripts). The function is checked by name.
 *
 * Each child gets ringrun's environment contract (worker_env.ts): RANK = LOCAL_RANK = rank,
 * WORLD_SIZE = LOCAL_WORLD_SIZE = nprocs, MASTER_ADDR/MASTER_PORT of a store this process hosts
 * on 127.0.0.1, a fresh RINGTORCH_STORE_TOKEN, so `await dist.initProcessGroup()` needs no
 * arguments. A child that throws fails the whole spawn: the others are stopped and the call
 * rejects with a ProcessRaisedException naming the rank and carrying its stack. Children are
 * stopped when this process gets SIGINT/SIGTERM/SIGHUP or exits, and end themselves when it
 * disappears (the lifeline of worker_preload.ts), so none is left behind. Children start with
 * `--no-node-snapshot` unless this process's node flags, NODE_OPTIONS or RINGTORCH_NODE_SNAPSHOT=1
 * choose otherwise (node_snapshot.ts).
 */
export async function spawn<A extends unknown[]>(fn: (rank: number, ...args: A) => unknown, options: SpawnOptions<A> = {}): Promise<SpawnContext | undefined> {
  checkArity("spawn", arguments, 2, "await spawn(fn, { nprocs, args, join })");
  if (typeof fn !== "function") throw new TypeError(`spawn: fn must be a function (rank, ...args) => unknown, got ${typeof fn}`);
  checkOptions("spawn", options, ["nprocs", "args", "join"]);
  if (spawnedRank() !== undefined) return runSpawnedChild(fn as unknown as (rank: number, ...args: never[]) => unknown);
  const nprocs = options.nprocs ?? 1;
  if (!Number.isInteger(nprocs) || nprocs < 1) throw new RangeError(`spawn: nprocs must be a positive integer, got ${nprocs}`);
  const args = options.args ?? ([] as unknown as A);
  if (!Array.isArray(args)) throw new TypeError(`spawn: args must be an array (the arguments after the rank), got ${typeof args}`);
  const script = process.argv[1];
  if (script === undefined || process.execArgv.some((f) => /^(-e|-p|--eval|--print)(=|$)/.test(f))) {
    throw new Error("spawn: the children re-run this process's main script, but it has none (node --eval or the REPL); call spawn() from a script file");
  }

  const dir = mkdtempSync(join(tmpdir(), "ringtorch-spawn-"));
  const argsFile = join(dir, "args.bin");
  writeFileSync(argsFile, serialize(args), { mode: 0o600 });
  const token = randomBytes(24).toString("hex");
  const store = await TCPStoreServer.listen({ host: "127.0.0.1", port: 0, token });
  const runId = randomUUID();
  // The parent's own flags (tsx's loader, --conditions) come along; --test would rerun a test file as
  // tests. --no-node-snapshot (and the semi-space RINGTORCH_SEMI_SPACE_MB asks for) make the
  // children's scavenges cheap (young_generation.ts).
  const ownFlags = process.execArgv.filter((f) => !f.startsWith("--test"));
  const nodeFlags = [...childNodeFlags(ownFlags, process.env), ...ownFlags, "--import", workerPreloadUrl];
  const specs: WorkerSpec[] = Array.from({ length: nprocs }, (_, rank) => {
    const logDir = join(dir, String(rank));
    mkdirSync(logDir, { mode: 0o700 });
    const logs = { dir: logDir, stdout: join(logDir, "stdout.log"), stderr: join(logDir, "stderr.log"), errorFile: join(logDir, "error.json") };
    const env = workerEnvironment(process.env, {
      rank,
      localRank: rank,
      groupRank: 0,
      worldSize: nprocs,
      localWorldSize: nprocs,
      groupWorldSize: 1,
      role: "default",
      masterAddr: "127.0.0.1",
      masterPort: store.port,
      storeToken: token,
      attempt: 0,
      restartCount: 0,
      maxRestarts: 0,
      runId,
      errorFile: logs.errorFile,
    });
    env[SPAWN_RANK_ENV] = String(rank);
    env[SPAWN_FN_ENV] = fn.name;
    env[SPAWN_ARGS_ENV] = argsFile;
    return {
      rank,
      localRank: rank,
      command: process.execPath,
      args: [...nodeFlags, script, ...process.argv.slice(2)],
      env,
      cwd: process.cwd(),
      logs,
      toFile: { stdout: false, stderr: false },
      console: { stdout: process.stdout, stderr: process.stderr },
      prefix: "",
    };
  });
  const context = new SpawnContext(specs, store, dir);
  if (options.join === false) return context;
  while (!(await context.join())) {
    // join() without a timeout returns only when every process is done.
  }
  return undefined;
}

/** torch.multiprocessing, for `mp.spawn(fn, { nprocs })` ports. */
export const multiprocessing = { spawn, SpawnContext };
