import { nodeFlagsWithOptions, snapshotFlags } from "./node_snapshot.js";

/**
 * The size of V8's young generation in the threads and processes ringtorch starts: DataParallel's
 * replica threads by default, and, when RINGTORCH_SEMI_SPACE_MB asks, ringrun's workers, spawn()'s
 * children and the bench harness's children.
 *
 * Why: the tensor arena (src/tensor/arena.ts) asks for a scavenge every few megabytes of outputs,
 * and each scavenge clears the marking bitmap of every page of the semi-space it evacuates into
 * (4 KiB per 256 KiB page), in memory the loop's tensors have just pushed out of the caches. V8
 * grows the semi-space to 16 MiB (64 pages) as objects survive; ringtorch's JavaScript objects are
 * small handles to tensor memory that lives outside V8's heap, so a large young generation buys
 * little and every forced scavenge pays for it. On this project's Zen 4 VM with ringtorch loaded, a
 * loop of 64 KB adds scavenged in 100 → 49 µs (median of 6 alternated runs) and one of 4 MB adds
 * in 197 → 106 µs with 1 MiB semi-spaces, and peak RSS fell 514–524 → 470–474 MB (bench/gpt.ts)
 * and 182–188 → 159–161 MB (bench/mlp.ts) with tokens/s and samples/s unchanged within the
 * machine's noise (README, Tensor memory). But JavaScript that makes many objects of its own pays:
 * GPT-2's byte-level BPE encoded 8.3 → 7.0 MB/s (bench/tokenize.ts, medians of 4 alternated runs).
 * So a process keeps V8's default unless RINGTORCH_SEMI_SPACE_MB asks (it holds the user's own
 * code: data loading, tokenizers), while a replica thread, which runs only the module's forward and
 * backward, gets 1 MiB unless RINGTORCH_SEMI_SPACE_MB says otherwise (0: V8's default).
 *
 * The user's choice wins: a `--max-semi-space-size` among the node flags (process.execArgv,
 * NODE_OPTIONS) is left alone, and V8 applies it to every thread.
 */
export const SEMI_SPACE_ENV = "RINGTORCH_SEMI_SPACE_MB";
const REPLICA_SEMI_SPACE_MB = 1;
const CHOICE = /^--max[-_]semi[-_]space[-_]size(=|$)/;

/** RINGTORCH_SEMI_SPACE_MB as a whole number of MiB (0: leave V8's default), `fallback` where unset, or a clear error. */
export function semiSpaceMb(env: NodeJS.ProcessEnv, fallback: number): number {
  const raw = env[SEMI_SPACE_ENV];
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0 || v > 1024) throw new RangeError(`${SEMI_SPACE_ENV}: expected a whole number of MiB from 0 (V8's default) to 1024, got ${JSON.stringify(raw)}`);
  return v;
}

/** The user's own `--max-semi-space-size` among the node flags or in NODE_OPTIONS, if any. */
export function userSemiSpaceFlag(nodeFlags: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  return nodeFlagsWithOptions(nodeFlags, env).find((f) => CHOICE.test(f));
}

/** The semi-space ringtorch sets, in MiB (RINGTORCH_SEMI_SPACE_MB, else `fallback`), or undefined where V8's default or the user's flag stands. */
function semiSpaceToSet(nodeFlags: readonly string[], env: NodeJS.ProcessEnv, fallback: number): number | undefined {
  const mb = semiSpaceMb(env, fallback);
  return mb === 0 || userSemiSpaceFlag(nodeFlags, env) !== undefined ? undefined : mb;
}

/** The flag to add to a child's node command line: `["--max-semi-space-size=N"]` where RINGTORCH_SEMI_SPACE_MB asks, or none. */
export function semiSpaceFlags(nodeFlags: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const mb = semiSpaceToSet(nodeFlags, env, 0);
  return mb === undefined ? [] : [`--max-semi-space-size=${mb}`];
}

/** Every node flag ringtorch adds to a Node process it starts: no startup snapshot (node_snapshot.ts), and the semi-space where asked. */
export function childNodeFlags(nodeFlags: readonly string[], env: NodeJS.ProcessEnv, keepSnapshot = false): string[] {
  return [...snapshotFlags(nodeFlags, env, keepSnapshot), ...semiSpaceFlags(nodeFlags, env)];
}

/**
 * A worker thread's young generation in MiB (worker_threads' resourceLimits.maxYoungGenerationSizeMb),
 * or undefined to keep the process's (V8's default, or the user's flag, which V8 applies to every
 * thread). V8 sizes a young generation as three semi-spaces: two, and a large-object space as big.
 */
export function workerYoungGenerationMb(nodeFlags: readonly string[], env: NodeJS.ProcessEnv): number | undefined {
  const mb = semiSpaceToSet(nodeFlags, env, REPLICA_SEMI_SPACE_MB);
  return mb === undefined ? undefined : 3 * mb;
}
