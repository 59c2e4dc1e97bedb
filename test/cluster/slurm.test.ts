import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { leftoverSegments } from "../distributed/harness.js";
import { checkCollectiveReports, checkDdpExample, checkDeathReported, type TaskOutput } from "./outputs.js";
import { processesWith, type SlurmCluster, slurmMissing, startSlurm, waitFor } from "./slurm_cluster.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COLLECTIVES = join(ROOT, "test/distributed/workers/collectives.ts");
const DDP_EXAMPLE = join(ROOT, "examples/ddp_mlp.ts");
const SBATCH = join(ROOT, "examples/slurm/train.sbatch");
const RINGRUN = join(ROOT, "bin/ringrun.js");
const RINGRUN_SBATCH = join(ROOT, "examples/slurm/ringrun.sbatch");
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

interface JobRun {
  code: number | null;
  tasks: TaskOutput[];
  /** srun's or the batch script's own output. */
  output: string;
}

/**
 * `srun -n N` and `sbatch -n N examples/slurm/train.sbatch` on a Slurm started for this file.
 * The tasks find each other only through Slurm's variables: no RANK, WORLD_SIZE or MASTER_* is set.
 */
describe("Slurm: srun and sbatch start ringtorch jobs without ringrun", { skip: slurmMissing() ?? false, concurrency: 2, timeout: 900_000 }, () => {
  let cluster: SlurmCluster;
  let work: string;
  let jobs = 0;

  before(async () => {
    cluster = await startSlurm();
    work = cluster.dir;
    // sbatch runs in the submit folder, a user's project where `npm install ringtorch` put tsx and
    // ringrun: the examples expect `--import tsx` and `npx ringrun` to resolve there.
    mkdirSync(join(work, "node_modules/.bin"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules/tsx"), join(work, "node_modules/tsx"));
    symlinkSync(ROOT, join(work, "node_modules/ringtorch"));
    symlinkSync("../ringtorch/bin/ringrun.js", join(work, "node_modules/.bin/ringrun"));
  });
  after(async () => {
    await cluster?.stop();
  });

  /** Environment of a job: the cluster's, a private token file, and a marker to find its processes by. */
  function jobEnv(extra: Record<string, string> = {}): { env: NodeJS.ProcessEnv; marker: string; prefix: string } {
    const prefix = join(work, `job${jobs++}`);
    const tokenFile = `${prefix}.token`;
    writeFileSync(tokenFile, randomUUID(), { mode: 0o600 });
    const marker = `RINGTORCH_TEST_MARK=${randomUUID()}`;
    const env: NodeJS.ProcessEnv = { ...cluster.env, RINGTORCH_STORE_TOKEN_FILE: tokenFile, RINGTORCH_QUIET: "1", [marker.split("=")[0]!]: marker.split("=")[1]!, ...extra };
    for (const k of ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN"]) delete env[k];
    return { env, marker, prefix };
  }

  function collect(code: number | null, output: string, prefix: string, n: number): JobRun {
    const read = (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : "");
    const tasks = Array.from({ length: n }, (_, t) => ({ stdout: read(`${prefix}-${t}.out`), stderr: read(`${prefix}-${t}.err`) }));
    return { code, tasks, output };
  }

  function exec(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      execFile(cmd, args, { env, cwd: work, timeout: 240_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: stdout + stderr });
      });
    });
  }

  async function srun(n: number, script: string, args: string[], extra?: Record<string, string>): Promise<JobRun> {
    const { env, prefix } = jobEnv(extra);
    const r = await exec("srun", ["-n", String(n), "-o", `${prefix}-%t.out`, "-e", `${prefix}-%t.err`, process.execPath, "--import", TSX, "--conditions=source", script, ...args], env);
    return collect(r.code, r.output, prefix, n);
  }

  async function sbatch(n: number, script: string, args: string[], extra?: Record<string, string>): Promise<JobRun> {
    // srun inside the batch script reads SLURM_STDOUTMODE/SLURM_STDERRMODE as its -o/-e: one file per task.
    const { env, prefix } = jobEnv({ SLURM_STDOUTMODE: "", SLURM_STDERRMODE: "", ...extra });
    env.SLURM_STDOUTMODE = `${prefix}-%t.out`;
    env.SLURM_STDERRMODE = `${prefix}-%t.err`;
    const r = await exec("sbatch", ["--wait", "-n", String(n), "-o", `${prefix}.batch`, SBATCH, script, ...args], env);
    const batch = existsSync(`${prefix}.batch`) ? readFileSync(`${prefix}.batch`, "utf8") : "";
    return collect(r.code, r.output + batch, prefix, n);
  }

  // Each launcher runs each workload once, srun at 3 tasks and sbatch at 2 for the collectives and
  // both at 3 for the DDP example: a job's start costs every task a Node start-up, and
  // test/distributed covers the collectives themselves at 1 to 4 ranks.
  it("srun -n 3: every collective matches its reference on every rank", async () => {
    const job = await srun(3, COLLECTIVES, [], { CASE_GRID: "small" });
    checkCollectiveReports(job.code, job.tasks, 3, job.output);
  });

  it("sbatch -n 3 train.sbatch: the DDP example trains and checkpoints", async () => {
    const job = await sbatch(3, DDP_EXAMPLE, ["2", "1"]);
    checkDdpExample(job.code, job.tasks, 3, job.output, work);
  });

  it("srun -n 3: the DDP example trains and checkpoints", async () => {
    const job = await srun(3, DDP_EXAMPLE, ["2", "1"]);
    checkDdpExample(job.code, job.tasks, 3, job.output, work);
  });

  it("sbatch -n 2 train.sbatch: the collectives too", async () => {
    const job = await sbatch(2, COLLECTIVES, [], { CASE_GRID: "small" });
    checkCollectiveReports(job.code, job.tasks, 2, job.output);
  });

  it("ringrun.sbatch: one ringrun per node under srun, with node layout, store port and run id from Slurm", async () => {
    const { env, prefix } = jobEnv({ CASE_GRID: "small", RINGTORCH_QUIET: "0" });
    const logs = `${prefix}-logs`;
    const r = await exec("sbatch", ["--wait", "-N", "1", "-o", `${prefix}.batch`, RINGRUN_SBATCH, "--nproc-per-node", "3", "--log-dir", logs, "--redirects", "3", COLLECTIVES], env);
    const batch = existsSync(`${prefix}.batch`) ? readFileSync(`${prefix}.batch`, "utf8") : "";
    const [runId] = existsSync(logs) ? readdirSync(logs) : [];
    assert.ok(runId, `${r.output}\n${batch}`);
    // The Slurm job id names the run, as torchrun's --rdzv-id would.
    assert.match(runId, /^\d+$/);
    assert.match(batch, new RegExp(`--master-port ${15000 + (Number(runId) % 10000)} from Slurm`));
    const attempt = join(logs, runId, "attempt_0");
    const tasks = [0, 1, 2].map((t) => ({ stdout: readFileSync(join(attempt, String(t), "stdout.log"), "utf8"), stderr: readFileSync(join(attempt, String(t), "stderr.log"), "utf8") }));
    checkCollectiveReports(r.code, tasks, 3, `${r.output}\n${batch}`);
  });

  it("a token file that others can read is refused by every task and by ringrun, with the fix", async () => {
    const { env, prefix } = jobEnv();
    chmodSync(env.RINGTORCH_STORE_TOKEN_FILE!, 0o644);
    const direct = await exec("srun", ["-n", "2", "-o", `${prefix}-%t.out`, "-e", `${prefix}-%t.err`, process.execPath, "--import", TSX, "--conditions=source", COLLECTIVES], env);
    const job = collect(direct.code, direct.output, prefix, 2);
    assert.notEqual(job.code, 0);
    for (const t of job.tasks) assert.match(t.stderr, /RINGTORCH_STORE_TOKEN_FILE=\S+ is readable by others \(mode 644\).*chmod 600/);
    const viaRingrun = await exec("srun", ["-n", "1", process.execPath, RINGRUN, "--nproc-per-node", "2", COLLECTIVES], env);
    assert.equal(viaRingrun.code, 2, viaRingrun.output);
    assert.match(viaRingrun.output, /ringrun: error: RINGTORCH_STORE_TOKEN_FILE=\S+ is readable by others/);
  });

  it("a rank that dies mid-collective: the others end with ringtorch's error naming it, and nothing is left", async () => {
    const { env, marker, prefix } = jobEnv();
    const r = await exec("srun", ["-n", "3", "-o", `${prefix}-%t.out`, "-e", `${prefix}-%t.err`, process.execPath, "--import", TSX, "--conditions=source", join(ROOT, "test/cluster/workers/dies.ts")], env);
    const job = collect(r.code, r.output, prefix, 3);
    assert.notEqual(job.code, 0, job.output);
    checkDeathReported(job.tasks, 1, job.output);
    assert.deepEqual(processesWith(marker), []);
  });

  it("scancel ends every task of a running job and leaves no process or shared memory behind", async () => {
    const { env, marker, prefix } = jobEnv();
    env.SLURM_STDOUTMODE = `${prefix}-%t.out`;
    env.SLURM_STDERRMODE = `${prefix}-%t.err`;
    const submitted = await exec("sbatch", ["--parsable", "-n", "3", "-o", `${prefix}.batch`, SBATCH, join(ROOT, "test/cluster/workers/loop.ts")], env);
    assert.equal(submitted.code, 0, submitted.output);
    const jobId = submitted.output.trim().split(";")[0]!;
    const ready = () => collect(0, "", prefix, 3).tasks.map((t) => /READY (\d+) (\d+)/.exec(t.stdout));
    await waitFor("all 3 tasks to be inside their all-reduce loop", () => ready().every((m) => m !== null), 120_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n${JSON.stringify(collect(0, "", prefix, 3))}`);
    });
    const pids = ready().map((m) => Number(m![2]));
    assert.equal(processesWith(marker).length > 3, true, "the job's processes carry the marker");
    const cancelled = await exec("scancel", [jobId], env);
    assert.equal(cancelled.code, 0, cancelled.output);
    await waitFor("the job's processes to end", () => processesWith(marker).length === 0, 60_000);
    await waitFor("the job to leave the queue", async () => (await exec("squeue", ["-h", "-j", jobId], env)).output.trim() === "", 30_000);
    assert.deepEqual(leftoverSegments(pids), []);
  });
});
