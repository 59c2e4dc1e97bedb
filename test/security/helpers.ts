import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { nodeScriptArgs } from "../child_node.js";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
export const WORKERS = fileURLToPath(new URL("./workers/", import.meta.url));

/** The OS user the attacks run as: another user on the same machine, as in the audit. */
const ATTACKER_USER = "ringtorch-attacker";

/**
 * setpriv words that run a command as the attacker user, created on first use; null when this
 * process is not root (the caller skips, saying so).
 */
export function asAttacker(): string[] | null {
  if (process.getuid?.() !== 0) return null;
  if (spawnSync("id", ["-u", ATTACKER_USER]).status !== 0) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER_USER], { encoding: "utf8" });
    // 9: another test created it meanwhile.
    if (made.status !== 0 && made.status !== 9 && spawnSync("id", ["-u", ATTACKER_USER]).status !== 0) {
      throw new Error(`useradd ${ATTACKER_USER} failed: ${made.stderr}`);
    }
  }
  const uid = spawnSync("id", ["-u", ATTACKER_USER], { encoding: "utf8" }).stdout.trim();
  const gid = spawnSync("id", ["-g", ATTACKER_USER], { encoding: "utf8" }).stdout.trim();
  return ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups"];
}

export const NOT_ROOT = "needs root: the attacker runs as another OS user (created with useradd, switched to with setpriv)";

/** A child process whose stdout lines are collected and can be waited for. */
export class Proc {
  readonly lines: string[] = [];
  stderr = "";
  readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];

  constructor(readonly child: ChildProcess) {
    let partial = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const parts = (partial + d).split("\n");
      partial = parts.pop()!;
      this.lines.push(...parts);
      for (const w of this.waiters.splice(0)) w();
    });
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  }

  static start(argv: string[], env: NodeJS.ProcessEnv = process.env): Proc {
    return new Proc(spawn(argv[0]!, argv.slice(1), { env, stdio: ["pipe", "pipe", "pipe"] }));
  }

  /** The first line matching `re`, waiting for it; fails after `guardMs` with what came. */
  async line(re: RegExp, guardMs = 30_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + guardMs;
    for (;;) {
      for (const l of this.lines) {
        const m = re.exec(l);
        if (m) return m;
      }
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`no line matching ${re} came from ${this.child.spawnfile} (stdout: ${this.lines.join(" | ")}; stderr: ${this.stderr})`);
      }
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Waits until `n` lines match `re`; gives up (without failing) after `guardMs`, for the caller to assert. */
  async waitCount(re: RegExp, n: number, guardMs = 30_000): Promise<void> {
    const deadline = Date.now() + guardMs;
    while (this.count(re) < n && Date.now() < deadline && this.child.exitCode === null) {
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  count(re: RegExp): number {
    return this.lines.filter((l) => re.test(l)).length;
  }

  stop(): Promise<number | null> {
    this.child.stdin?.end();
    const t = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    return this.exited.finally(() => clearTimeout(t));
  }
}

/** Every byte a squatter recorded, per connection. */
export function recorded(p: Proc): Buffer[] {
  const byConn: Buffer[] = [];
  for (const l of p.lines) {
    const m = /^DATA (\d+) ([0-9a-f]*)$/.exec(l);
    if (m) byConn[Number(m[1])] = Buffer.concat([byConn[Number(m[1])] ?? Buffer.alloc(0), Buffer.from(m[2]!, "hex")]);
  }
  return byConn.filter(Boolean);
}

/** The token in every form a leak could take: its text, and the bytes it spells when it is hex. */
export function tokenForms(token: string): Buffer[] {
  const forms = [Buffer.from(token, "utf8")];
  if (/^[0-9a-f]+$/i.test(token) && token.length % 2 === 0) forms.push(Buffer.from(token, "hex"));
  return forms;
}

/** TCP ports that process `pid` listens on at 127.0.0.1 (from /proc, so root sees any process's). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== "0A" || !inodes.has(f[9]!)) continue;
    const [ip, port] = f[1]!.split(":");
    if (ip === "0100007F") ports.push(parseInt(port!, 16));
  }
  return ports;
}

/** Starts ranks `ranks` of a `world`-rank job running `script` (in workers/), with the torchrun variables. */
export function startRanks(world: number, ranks: number[], script: string, port: number, token: string, env: Record<string, string> = {}): Proc[] {
  return ranks.map((rank) =>
    Proc.start([process.execPath, ...nodeScriptArgs(`${WORKERS}${script}`, ["--import", "tsx"])], {
      ...process.env,
      MASTER_ADDR: "127.0.0.1",
      MASTER_PORT: String(port),
      RANK: String(rank),
      WORLD_SIZE: String(world),
      LOCAL_RANK: String(rank),
      LOCAL_WORLD_SIZE: String(world),
      RINGTORCH_STORE_TOKEN: token,
      ...env,
    }),
  );
}

/** Waits for every process to exit, killing those still running after `guardMs`; returns their exit codes. */
export async function exits(procs: Proc[], guardMs: number): Promise<(number | null)[]> {
  const guard = setTimeout(() => procs.forEach((p) => p.child.kill("SIGKILL")), guardMs);
  try {
    return await Promise.all(procs.map((p) => p.exited));
  } finally {
    clearTimeout(guard);
  }
}
