import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { availableParallelism, hostname } from "node:os";
import { resolve } from "node:path";
import { FLAGS, UsageError, type ParsedArgs } from "./cli_options.js";
import { detectCluster } from "./cluster_env.js";
import { snapshotKeptByEnv } from "./node_snapshot.js";
import { readTokenFileEnv } from "../distributed/token_file.js";

/** What the workers run: a script file, a module specifier (-m), an executable (--no-python), or a script run from ringrun's entry (--run-path). */
export type Entry =
  | { readonly kind: "script"; readonly path: string }
  | { readonly kind: "module"; readonly specifier: string }
  | { readonly kind: "executable"; readonly command: string }
  | { readonly kind: "run-path"; readonly path: string };

/** Which of a worker's streams go to log files; 0 none, 1 stdout, 2 stderr, 3 both, per local rank. */
export interface StdSpec {
  readonly all: number;
  readonly perLocalRank: ReadonlyMap<number, number>;
}

export interface RendezvousTimeouts {
  readonly joinTimeoutMs: number;
  readonly lastCallTimeoutMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly exitBarrierTimeoutMs: number;
}

export interface LaunchConfig {
  readonly minNodes: number;
  readonly maxNodes: number;
  readonly nprocPerNode: number;
  /** Meaningful for static rendezvous only; c10d numbers nodes in the order they join. */
  readonly nodeRank: number;
  readonly backend: "static" | "c10d";
  readonly standalone: boolean;
  readonly storeHost: string;
  /** 0 only for --standalone: the store takes a free port. */
  readonly storePort: number;
  readonly runId: string;
  readonly rendezvous: RendezvousTimeouts;
  readonly maxRestarts: number;
  readonly monitorIntervalMs: number;
  readonly termTimeoutMs: number;
  readonly role: string;
  readonly entry: Entry;
  readonly scriptArgs: readonly string[];
  readonly logDir: string | undefined;
  readonly redirects: StdSpec;
  readonly tee: StdSpec;
  readonly localRanksFilter: ReadonlySet<number> | undefined;
  readonly localAddr: string;
  readonly token: string;
  /** --trace (or RINGTORCH_TRACE): where the workers write their timelines, merged at the end. */
  readonly traceDir: string | undefined;
  /** --node-snapshot: workers keep Node's startup snapshot (node_snapshot.ts says what it costs). */
  readonly nodeSnapshot: boolean;
  /** Lines worth telling the user once (where a value came from). */
  readonly notes: readonly string[];
}

const DEFAULT_C10D_PORT = 29400;

export function resolveConfig(parsed: ParsedArgs, env: NodeJS.ProcessEnv, cwd: string): LaunchConfig {
  const cluster = detectCluster(env);
  const notes: string[] = [];
  const fromUser = (name: string): string | undefined => parsed.given.get(name) ?? env[`PET_${name.toUpperCase().replace(/-/g, "_")}`];
  const option = (name: string): string => fromUser(name) ?? FLAGS.find((f) => f.name === name)!.default ?? "";
  const flag = (name: string): boolean => {
    const value = fromUser(name);
    return value !== undefined && value !== "0" && value.toLowerCase() !== "false";
  };
  const fromCluster = <T>(name: string, hint: T | undefined): string | undefined => {
    if (fromUser(name) !== undefined || hint === undefined) return undefined;
    notes.push(`--${name} ${String(hint)} from ${cluster!.source}`);
    return String(hint);
  };

  const standalone = flag("standalone");
  const backendName = option("rdzv-backend");
  if (backendName !== "static" && backendName !== "c10d") {
    throw new UsageError(`--rdzv-backend expects 'static' or 'c10d', got '${backendName}'`);
  }
  const backend = standalone ? "static" : backendName;
  const [minNodes, maxNodes] = parseNnodes(fromCluster("nnodes", cluster?.nnodes) ?? option("nnodes"));
  if (standalone && maxNodes > 1) throw new UsageError(`--standalone runs a single-node job, but --nnodes asks for ${maxNodes} nodes; drop one of them`);
  if (backend === "static" && minNodes !== maxNodes) {
    throw new UsageError(`--nnodes ${minNodes}:${maxNodes} needs an elastic rendezvous; add --rdzv-backend c10d --rdzv-endpoint HOST:PORT, or give a fixed node count`);
  }
  const nodeRank = nonNegativeInt("node-rank", fromCluster("node-rank", cluster?.nodeRank) ?? option("node-rank"));
  if (backend === "static" && nodeRank >= maxNodes) throw new UsageError(`--node-rank ${nodeRank} is out of range for --nnodes ${maxNodes} (expected 0 to ${maxNodes - 1})`);

  let storeHost: string;
  let storePort: number;
  const endpoint = option("rdzv-endpoint");
  if (standalone) {
    [storeHost, storePort] = ["127.0.0.1", 0];
  } else if (endpoint !== "") {
    [storeHost, storePort] = parseEndpoint(endpoint, backend === "c10d" ? DEFAULT_C10D_PORT : undefined);
  } else if (backend === "c10d") {
    throw new UsageError("--rdzv-backend c10d needs --rdzv-endpoint HOST[:PORT] naming the node that hosts the store");
  } else {
    storeHost = fromCluster("master-addr", cluster?.masterAddr) ?? option("master-addr");
    storePort = port("master-port", fromCluster("master-port", cluster?.masterPort) ?? option("master-port"));
  }
  if (!standalone && storePort === 0 && maxNodes > 1) throw new UsageError("port 0 (any free port) works only for a single-node job; give the store a fixed port that every node can reach");

  const runId = standalone ? randomUUID() : fromUser("rdzv-id") ?? fromCluster("rdzv-id", cluster?.runId) ?? option("rdzv-id");
  // It names a folder under --log-dir that each attempt deletes and recreates: "." or ".." would
  // make that the log folder itself or its parent.
  if (!/^[\w.-]+$/.test(runId) || runId === "." || runId === "..") {
    throw new UsageError(`--rdzv-id '${runId}' must be letters, digits, '.', '_' or '-', and not '.' or '..' (it names a folder under --log-dir)`);
  }

  const token = env.RINGTORCH_STORE_TOKEN || tokenFromFile(env) || (maxNodes === 1 ? randomBytes(32).toString("hex") : undefined);
  if (token === undefined || token === "") {
    throw new UsageError(
      "a multi-node job needs RINGTORCH_STORE_TOKEN, the same secret on every node; create one with " +
        "`export RINGTORCH_STORE_TOKEN=$(node -e \"console.log(require('crypto').randomBytes(32).toString('hex'))\")` and start each node's ringrun with it, " +
        "or put it in a file only the job's user can read and set RINGTORCH_STORE_TOKEN_FILE to its path",
    );
  }

  return {
    minNodes,
    maxNodes,
    nprocPerNode: parseNproc(option("nproc-per-node")),
    nodeRank,
    backend,
    standalone,
    storeHost,
    storePort,
    runId,
    rendezvous: parseRdzvConf(option("rdzv-conf"), notes),
    maxRestarts: nonNegativeInt("max-restarts", option("max-restarts")),
    monitorIntervalMs: positiveSeconds("monitor-interval", option("monitor-interval")) * 1000,
    termTimeoutMs: positiveSeconds("term-timeout", option("term-timeout"), true) * 1000,
    role: nonEmpty("role", option("role")),
    entry: resolveEntry(parsed.script, flag("module"), flag("no-python"), flag("run-path"), cwd),
    scriptArgs: parsed.scriptArgs,
    logDir: fromUser("log-dir") === undefined ? undefined : resolve(cwd, option("log-dir")),
    redirects: parseStd("redirects", option("redirects")),
    tee: parseStd("tee", option("tee")),
    localRanksFilter: parseRankList(option("local-ranks-filter")),
    localAddr: fromUser("local-addr") ?? hostname(),
    token,
    traceDir: traceDir(fromUser("trace") ?? env.RINGTORCH_TRACE, cwd),
    nodeSnapshot: flag("node-snapshot") || usage(() => snapshotKeptByEnv(env)),
    notes,
  };
}

function traceDir(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError("--trace expects the folder to write the trace into, got an empty value");
  return resolve(cwd, value);
}

function usage<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function tokenFromFile(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return readTokenFileEnv(env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function resolveEntry(script: string | undefined, module: boolean, noPython: boolean, runPath: boolean, cwd: string): Entry {
  if (script === undefined) throw new UsageError("no training script given (usage: ringrun [options] script.ts [args...]; see ringrun --help)");
  if ([module, noPython, runPath].filter(Boolean).length > 1) throw new UsageError("-m, --no-python and --run-path exclude one another; pick one");
  if (module) return { kind: "module", specifier: script };
  if (noPython) return { kind: "executable", command: script };
  const path = resolve(cwd, script);
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`training script ${script} does not exist (looked for ${path})`);
  return runPath ? { kind: "run-path", path } : { kind: "script", path };
}

function parseNnodes(value: string): [number, number] {
  const match = /^(\d+)(?::(\d+))?$/.exec(value.trim());
  const [min, max] = match === null ? [NaN, NaN] : [Number(match[1]), Number(match[2] ?? match[1])];
  if (!(min >= 1 && max >= min)) throw new UsageError(`--nnodes expects N or MIN:MAX with 1 <= MIN <= MAX, got '${value}'`);
  return [min, max];
}

function parseNproc(value: string): number {
  if (value === "auto" || value === "cpu") return availableParallelism();
  if (value === "gpu" || value === "xpu") throw new UsageError(`--nproc-per-node ${value}: ringtorch runs on CPUs; use a number, 'auto' or 'cpu'`);
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--nproc-per-node expects a positive integer, 'auto' or 'cpu', got '${value}'`);
  return Number(value);
}

function parseEndpoint(value: string, defaultPort: number | undefined): [string, number] {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value.trim());
  if (match === null || (match[2] === undefined && defaultPort === undefined)) {
    throw new UsageError(`--rdzv-endpoint expects HOST:PORT, got '${value}'`);
  }
  const host = match[1]!.replace(/^\[(.*)\]$/, "$1");
  return [host, match[2] === undefined ? defaultPort! : port("rdzv-endpoint", match[2])];
}

function port(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--${name} expects a port number 0-65535, got '${value}'`);
  return Number(value);
}

function nonNegativeInt(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} expects a non-negative integer, got '${value}'`);
  return Number(value);
}

function positiveSeconds(name: string, value: string, zeroAllowed = false): number {
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0 || (seconds === 0 && !zeroAllowed)) {
    throw new UsageError(`--${name} expects a ${zeroAllowed ? "non-negative" : "positive"} number of seconds, got '${value}'`);
  }
  return seconds;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === "") throw new UsageError(`--${name} must not be empty`);
  return value;
}

function parseStd(name: string, value: string): StdSpec {
  const bad = () => new UsageError(`--${name} expects 0-3 or LOCAL_RANK:0-3 pairs like 0:1,1:3, got '${value}'`);
  if (/^[0-3]$/.test(value)) return { all: Number(value), perLocalRank: new Map() };
  const perLocalRank = new Map<number, number>();
  for (const pair of value.split(",")) {
    const match = /^(\d+):([0-3])$/.exec(pair.trim());
    if (match === null) throw bad();
    perLocalRank.set(Number(match[1]), Number(match[2]));
  }
  return { all: 0, perLocalRank };
}

export function streamsToFile(spec: StdSpec, localRank: number): { stdout: boolean; stderr: boolean } {
  const value = spec.perLocalRank.get(localRank) ?? spec.all;
  return { stdout: (value & 1) !== 0, stderr: (value & 2) !== 0 };
}

function parseRankList(value: string): ReadonlySet<number> | undefined {
  if (value.trim() === "") return undefined;
  const ranks = value.split(",").map((r) => r.trim());
  if (!ranks.every((r) => /^\d+$/.test(r))) throw new UsageError(`--local-ranks-filter expects comma-separated local ranks like 0,1, got '${value}'`);
  return new Set(ranks.map(Number));
}

const RDZV_KEYS: Record<string, keyof RendezvousTimeouts> = {
  join_timeout: "joinTimeoutMs",
  timeout: "joinTimeoutMs",
  last_call_timeout: "lastCallTimeoutMs",
  heartbeat_timeout: "heartbeatTimeoutMs",
  exit_barrier_timeout: "exitBarrierTimeoutMs",
};

function parseRdzvConf(value: string, notes: string[]): RendezvousTimeouts {
  const timeouts: Record<keyof RendezvousTimeouts, number> = {
    joinTimeoutMs: 600_000,
    lastCallTimeoutMs: 30_000,
    heartbeatTimeoutMs: 30_000,
    exitBarrierTimeoutMs: 300_000,
  };
  if (value.trim() === "") return timeouts;
  for (const pair of value.split(",")) {
    const [key = "", raw = ""] = pair.split("=").map((s) => s.trim());
    const field = RDZV_KEYS[key];
    if (field === undefined) {
      notes.push(`--rdzv-conf ${key} is not used by ringrun (known: ${Object.keys(RDZV_KEYS).join(", ")})`);
      continue;
    }
    timeouts[field] = positiveSeconds(`rdzv-conf ${key}`, raw) * 1000;
  }
  return timeouts;
}
