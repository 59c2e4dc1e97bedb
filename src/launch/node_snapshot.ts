/**
 * Whether the Node processes ringtorch starts (ringrun's workers, spawn()'s children, the bench
 * harness's children) run with `--no-node-snapshot`.
 *
 * Why: Node 20 starts from a V8 startup snapshot, and V8 11.3 visits that snapshot's object cache
 * as roots in every scavenge. The tensor arena (src/tensor/arena.ts) asks for a scavenge every few
 * megabytes of outputs, so that cost is paid thousands of times a second: on this project's Zen 3
 * VMs an empty scavenge took 100-300 µs with the snapshot, 25-40 µs without it (README, Tensor
 * memory), and a loop of 1 MB adds spent 59 against 34 µs per call in the collector. The price is
 * startup: Node builds its bootstrap state itself, about 60 ms more per process.
 *
 * The user's own choice wins: `--node-snapshot`, `--no-node-snapshot` or a `--snapshot-blob` among
 * the node flags (process.execArgv, NODE_OPTIONS) is left alone, and RINGTORCH_NODE_SNAPSHOT=1
 * (ringrun: `--node-snapshot`) keeps Node's default.
 */
export const NODE_SNAPSHOT_ENV = "RINGTORCH_NODE_SNAPSHOT";

const CHOICE = /^--(no-)?node-snapshot$|^--snapshot-blob(=|$)/;

/**
 * The node flags in effect for a process started with `nodeFlags`: those, then NODE_OPTIONS split as
 * Node splits it for the flags ringtorch looks for (they never hold spaces or quotes).
 */
export function nodeFlagsWithOptions(nodeFlags: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return [...nodeFlags, ...(env.NODE_OPTIONS ?? "").split(/\s+/)];
}

/** The flags to add to a child's node command line: `["--no-node-snapshot"]`, or none where the user chose. */
export function snapshotFlags(nodeFlags: readonly string[], env: NodeJS.ProcessEnv, keepSnapshot = false): string[] {
  if (keepSnapshot || snapshotKeptByEnv(env)) return [];
  if (nodeFlagsWithOptions(nodeFlags, env).some((f) => CHOICE.test(f))) return [];
  return ["--no-node-snapshot"];
}

/** RINGTORCH_NODE_SNAPSHOT=1: keep Node's startup snapshot; a value other than 0/1/true/false is an error. */
export function snapshotKeptByEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env[NODE_SNAPSHOT_ENV];
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw new RangeError(`${NODE_SNAPSHOT_ENV}: expected 1 (keep Node's startup snapshot) or 0, got ${JSON.stringify(value)}`);
}
