import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../distributed/harness.js";

const run = promisify(execFile);

/** A one-node Slurm cluster on this machine: munged, slurmctld and slurmd, in a private temp dir. */
export interface SlurmCluster {
  readonly dir: string;
  readonly node: string;
  /** SLURM_CONF pointing at this cluster's slurm.conf, on top of process.env. */
  readonly env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const BINARIES = ["munged", "slurmctld", "slurmd", "srun", "sbatch", "scancel", "squeue", "sinfo"];

/** Why a real Slurm cannot run here, or null when it can. */
export function slurmMissing(): string | null {
  const missing = BINARIES.filter((b) => spawnSync("sh", ["-c", `command -v ${b}`]).status !== 0);
  if (missing.length > 0) return `Slurm is not installed (missing ${missing.join(", ")}; Debian: apt-get install slurm-wlm munge)`;
  if (process.getuid?.() !== 0) return "slurmd must run as root to start job steps";
  return null;
}

/**
 * Starts the daemons in the foreground (-D / -F) with a generated slurm.conf, so they are this
 * process's children and the machine's own Slurm, if any, is left alone. CPUs=8 lets 2 and 3
 * task jobs run side by side on a 2-core machine (the tasks only oversubscribe the cores).
 */
export async function startSlurm(): Promise<SlurmCluster> {
  const node = hostname().split(".")[0]!;
  // Tasks find rank 0 by the node's name (the first host of SLURM_NODELIST), as on a real cluster.
  await lookup(node).catch(() => {
    throw new Error(`this machine's hostname ${node} does not resolve; Slurm's node list names it`);
  });
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-slurm-"));
  for (const d of ["state", "spool", "log"]) mkdirSync(join(dir, d));
  writeFileSync(join(dir, "munge.key"), randomBytes(1024), { mode: 0o600 });
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  const conf = join(dir, "slurm.conf");
  writeFileSync(
    conf,
    [
      "ClusterName=ringtorch",
      `SlurmctldHost=${node}(127.0.0.1)`,
      "SlurmUser=root",
      "SlurmdUser=root",
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${slurmdPort}`,
      "AuthType=auth/munge",
      "CredType=cred/munge",
      `AuthInfo=socket=${dir}/munge.sock`,
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd.pid`,
      `SlurmctldLogFile=${dir}/log/slurmctld.log`,
      `SlurmdLogFile=${dir}/log/slurmd.log`,
      // Tracks a job's processes by parentage: no cgroups needed, which containers often lack.
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "SwitchType=switch/none",
      "MpiDefault=none",
      "SchedulerType=sched/builtin",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_CPU",
      "SlurmdParameters=config_overrides",
      "ReturnToService=2",
      "JobCompType=jobcomp/none",
      "AccountingStorageType=accounting_storage/none",
      "JobAcctGatherType=jobacct_gather/none",
      "KillWait=5",
      "MinJobAge=2",
      `NodeName=${node} NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN`,
      `PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP`,
      "",
    ].join("\n"),
  );
  const env = { ...process.env, SLURM_CONF: conf };
  const daemons: ChildProcess[] = [];
  const start = (cmd: string, args: string[]) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
    (child as ChildProcess & { log: () => string }).log = () => err;
    daemons.push(child);
  };
  const stop = async () => {
    await run("scancel", ["--user", "root"], { env }).catch(() => {});
    for (const d of daemons.reverse()) {
      d.kill("SIGTERM");
      const gone = new Promise((r) => d.once("exit", r));
      const timer = setTimeout(() => d.kill("SIGKILL"), 5000);
      if (d.exitCode === null && d.signalCode === null) await gone;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    start("munged", ["-F", "-f", `--key-file=${dir}/munge.key`, `--socket=${dir}/munge.sock`, `--pid-file=${dir}/munged.pid`, `--log-file=${dir}/log/munged.log`, `--seed-file=${dir}/munged.seed`]);
    await waitFor("munged's socket", () => run("munge", ["-S", `${dir}/munge.sock`, "-n"]).then(() => true), 15_000);
    start("slurmctld", ["-D", "-i"]);
    start("slurmd", ["-D", "-N", node]);
    await waitFor("the Slurm node to become idle", async () => (await run("sinfo", ["-h", "-o", "%T"], { env })).stdout.trim() === "idle", 30_000);
  } catch (err) {
    const logs = daemons.map((d) => (d as ChildProcess & { log: () => string }).log()).join("\n");
    await stop();
    throw new Error(`${(err as Error).message}\n${logs}`);
  }
  return { dir, node, env, stop };
}

/** Polls `check` every 200 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Pids of live processes whose environment holds `marker` (a NAME=value pair unique to one test). */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  const self = process.pid;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === self) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(marker)) out.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}
