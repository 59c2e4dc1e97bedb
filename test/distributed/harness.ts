import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { nodeScriptArgs } from "../child_node.js";

export interface RankResult {
  rank: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON a worker script printed on a line starting with RESULT. */
  result: unknown;
  pid: number;
}

export interface LaunchOptions {
  world: number;
  script: string;
  env?: Record<string, string>;
  rankEnv?: (rank: number) => Record<string, string>;
  /** Command words before `node`, e.g. to run a rank inside a network namespace. */
  prefix?: (rank: number) => string[];
  /** Ranks still running after this are killed (and reported as such). */
  timeoutMs?: number;
}

export const WORKERS = fileURLToPath(new URL("./workers/", import.meta.url));

/**
 * Runs `world` node processes of a worker script with the torchrun environment, as separate
 * processes, and collects what each printed and how it exited.
 */
export async function launch(opts: LaunchOptions): Promise<RankResult[]> {
  const port = await freePort();
  const token = randomBytes(16).toString("hex");
  const script = opts.script.startsWith("/") ? opts.script : WORKERS + opts.script;
  const runs = Array.from({ length: opts.world }, (_, rank) => {
    const env = {
      ...process.env,
      MASTER_ADDR: "127.0.0.1",
      MASTER_PORT: String(port),
      RANK: String(rank),
      WORLD_SIZE: String(opts.world),
      LOCAL_RANK: String(rank),
      LOCAL_WORLD_SIZE: String(opts.world),
      RINGTORCH_STORE_TOKEN: token,
      ...opts.env,
      ...opts.rankEnv?.(rank),
    };
    const argv = [...(opts.prefix?.(rank) ?? []), process.execPath, ...nodeScriptArgs(script, ["--import", "tsx"])];
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    return new Promise<RankResult>((resolve) => {
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
        resolve({ rank, code, signal, stdout, stderr, result: line ? JSON.parse(line.slice(7)) : undefined, pid: child.pid ?? -1 });
      });
    });
  });
  return Promise.all(runs);
}

/**
 * A port nothing listens on, for a test to hand to a server it starts. Picked below the kernel's
 * ephemeral range: a port from listen(0) lies inside it, where any process's outgoing connection
 * may take it between our close and the server's bind (seen in CI as "port taken" while other
 * suites ran). Below the range only another listener can collide, and the bind checks that.
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const low = ephemeralLow();
  // Not 15000-24999: a Slurm job's store port is 15000 + its job id mod 10000 (launch/cluster_env.ts),
  // and test/cluster/slurm.test.ts's jobs, numbered from 1, failed in CI with "port already in use"
  // when a test in another file running beside it had been handed 15004.
  const [slurmLow, slurmHigh] = [15_000, 25_000];
  const ports = low - 10_000 - Math.max(0, Math.min(low, slurmHigh) - slurmLow);
  for (let attempt = 0; attempt < 50; attempt++) {
    let port = 10_000 + Math.floor(Math.random() * ports);
    if (port >= slurmLow) port += slurmHigh - slurmLow;
    if (await canListen(port, host)) return port;
  }
  throw new Error(`freePort: found no free port on ${host} below ${low} in 50 tries`);
}

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** Shared-memory segments that processes with these pids left behind. */
export function leftoverSegments(pids: number[]): string[] {
  if (!existsSync("/dev/shm")) return [];
  return readdirSync("/dev/shm").filter((n) => pids.some((pid) => new RegExp(`^ringtorch-\\d+-${pid}-`).test(n)));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function explain(results: RankResult[]): string {
  return results.map((r) => `--- rank ${r.rank} exited ${r.code ?? r.signal}\n${r.stdout}\n${r.stderr}`).join("\n");
}
