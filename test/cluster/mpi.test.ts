import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodeScriptArgs } from "../child_node.js";
import { leftoverSegments } from "../distributed/harness.js";
import { checkCollectiveReports, checkDeathReported, type TaskOutput } from "./outputs.js";
import { processesWith, waitFor } from "./slurm_cluster.js";
import { mpiAllReduceMode } from "../../src/distributed/mpi/local_shm.js";
import { testHostOf } from "../../src/distributed/mpi/hosts.js";
import { singleCpuBindingWarning } from "../../src/distributed/mpi/binding.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
/** A rank's command after `node`: the script compiled against dist/ when the test runner made it so (child_node.ts). */
const WORKER = (name: string) => nodeScriptArgs(join(ROOT, name), ["--import", TSX, "--conditions=source"]);
const MPIRUN = ["--allow-run-as-root", "--oversubscribe", "--tag-output"];
const missing = spawnSync("sh", ["-c", "command -v mpirun"]).status === 0 ? false : "mpirun is not installed (Debian: apt-get install openmpi-bin)";

/** Splits `--tag-output`'s "[job,rank]<stdout>:line" back into each rank's streams. */
function untag(output: string, n: number): TaskOutput[] {
  const tasks = Array.from({ length: n }, () => ({ stdout: "", stderr: "" }));
  for (const line of output.split("\n")) {
    const m = /^\[\d+,(\d+)\]<(stdout|stderr)>:(.*)$/.exec(line);
    if (m && Number(m[1]) < n) tasks[Number(m[1])]![m[2] as "stdout" | "stderr"] += `${m[3]}\n`;
  }
  return tasks;
}

// Each mpirun's session directory under a base of its own: Open MPI 4.1 creates /tmp/ompi.<host>.<uid>
// at start and fails the job when another mpirun created it in between ("mkdir ... File exists",
// orte_init failed: seen in CI with two of these suites' jobs starting together).
const sessionBases: string[] = [];
process.on("exit", () => {
  for (const dir of sessionBases) rmSync(dir, { recursive: true, force: true });
});

/** The environment of one mpirun: none of the torchrun variables, so ranks come from Open MPI's. */
function mpiEnv(extra: Record<string, string> = {}): { env: NodeJS.ProcessEnv; marker: string } {
  const marker = `RINGTORCH_TEST_MARK=${randomUUID()}`;
  const sessionBase = mkdtempSync(join(tmpdir(), "rt-ompi-"));
  sessionBases.push(sessionBase);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RINGTORCH_QUIET: "1",
    RINGTORCH_TEST_MARK: marker.slice(20),
    OMPI_MCA_orte_tmpdir_base: sessionBase,
    ...extra,
  };
  for (const k of ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_STORE_TOKEN_FILE"]) delete env[k];
  return { env, marker };
}

function mpirun(n: number, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT, options: string[] = []): Promise<{ code: number | null; output: string; tasks: TaskOutput[] }> {
  return new Promise((resolve) => {
    execFile("mpirun", [...MPIRUN, ...options, "-np", String(n), process.execPath, ...args], { env, cwd, timeout: 240_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      const output = stdout + stderr;
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output, tasks: untag(output, n) });
    });
  });
}

describe("mpirun -np N node script.ts: ranks from Open MPI's variables, ringtorch's own transports", { skip: missing, concurrency: 2, timeout: 900_000 }, () => {
  // One odd world size: what this checks is the ranks taken from Open MPI's variables; the
  // transports' collectives are covered at 1 to 4 ranks in test/distributed.
  it("mpirun -np 3: every collective matches its reference on every rank", async () => {
    const job = await mpirun(3, WORKER("test/distributed/workers/collectives.ts"), mpiEnv({ CASE_GRID: "small" }).env);
    checkCollectiveReports(job.code, job.tasks, 3, job.output);
  });

  it("mpirun -np 3: DDP takes the same steps as one process on the whole batch", async () => {
    const job = await mpirun(3, WORKER("test/parallel/workers/ddp_equivalence.ts"), mpiEnv().env);
    checkDdpEquivalence(job);
  });

  it("a rank that exits mid-collective: the others end with ringtorch's error naming it", async () => {
    // orte_abort_on_non_zero_status=0 lets the others end on their own instead of being killed
    // by mpirun's abort, which would race with what they print.
    const { env, marker } = mpiEnv({ DIE_BY: "exit" });
    const job = await mpirun(3, WORKER("test/cluster/workers/dies.ts"), env, ROOT, ["--mca", "orte_abort_on_non_zero_status", "0"]);
    checkDeathReported(job.tasks, 1, job.output);
    assert.deepEqual(processesWith(marker), []);
  });

  it("a rank killed by a signal: mpirun fails the job and leaves no process or shared memory behind", async () => {
    const { env, marker } = mpiEnv();
    const job = await mpirun(3, WORKER("test/cluster/workers/dies.ts"), env);
    assert.notEqual(job.code, 0, job.output);
    const pids = job.tasks.map((t) => Number(/READY \d+ (\d+)/.exec(t.stdout)?.[1] ?? -1));
    assert.deepEqual(processesWith(marker), []);
    assert.deepEqual(leftoverSegments(pids), []);
  });

  it("interrupting mpirun ends every rank", async () => {
    const { env, marker } = mpiEnv();
    const child = spawn("mpirun", [...MPIRUN, "-np", "3", process.execPath, ...WORKER("test/cluster/workers/loop.ts")], { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise((r) => child.once("exit", r));
    await waitFor("all 3 ranks to be inside their all-reduce loop", () => (output.match(/READY/g) ?? []).length === 3, 120_000).catch((err) => {
      child.kill("SIGKILL");
      throw new Error(`${(err as Error).message}\n${output}`);
    });
    const pids = untag(output, 3).map((t) => Number(/READY \d+ (\d+)/.exec(t.stdout)![1]));
    child.kill("SIGINT");
    await exited;
    await waitFor("the ranks to end", () => processesWith(marker).length === 0, 30_000);
    assert.deepEqual(leftoverSegments(pids), []);
  });
});

// The mpi backend: collectives on Open MPI itself, through the optional addon (scripts/build-mpi.js).
const noAddon = missing || (existsSync(join(ROOT, "build/Release/ringtorch_mpi.node")) ? false : "the MPI addon is not built (Debian: libopenmpi-dev, then npm run build:native)");

describe("RINGTORCH_MPI_ALLREDUCE", () => {
  it("takes auto (the default), mpi, shm or hier, and names a wrong value", () => {
    assert.equal(mpiAllReduceMode({}), "auto");
    assert.equal(mpiAllReduceMode({ RINGTORCH_MPI_ALLREDUCE: "MPI" }), "mpi");
    assert.equal(mpiAllReduceMode({ RINGTORCH_MPI_ALLREDUCE: "shm" }), "shm");
    assert.equal(mpiAllReduceMode({ RINGTORCH_MPI_ALLREDUCE: "hier" }), "hier");
    assert.throws(() => mpiAllReduceMode({ RINGTORCH_MPI_ALLREDUCE: "nccl" }), /RINGTORCH_MPI_ALLREDUCE must be auto, mpi, shm or hier, got "nccl"/);
  });

  it("RINGTORCH_MPI_TEST_HOSTS splits the ranks into fake hosts of consecutive ranks, and names a wrong value", () => {
    const hosts = (v: string, size: number) => Array.from({ length: size }, (_, r) => testHostOf(r, size, { RINGTORCH_MPI_TEST_HOSTS: v }));
    assert.deepEqual(hosts("2,2", 4), [0, 0, 1, 1]);
    assert.deepEqual(hosts("2, 1", 3), [0, 0, 1]);
    assert.deepEqual(hosts("2,2,2", 6), [0, 0, 1, 1, 2, 2]);
    assert.equal(testHostOf(0, 4, {}), -1);
    assert.throws(() => testHostOf(0, 4, { RINGTORCH_MPI_TEST_HOSTS: "2,1" }), /adding up to the job's 4 ranks \(e\.g\. "2,2"\), got "2,1"/);
    assert.throws(() => testHostOf(0, 4, { RINGTORCH_MPI_TEST_HOSTS: "4,0" }), /RINGTORCH_MPI_TEST_HOSTS must list/);
  });

  it("a rank bound to one CPU of several is warned, with the mpirun option that unbinds it", () => {
    assert.match(singleCpuBindingWarning(1, 1, 2) ?? "", /rank 1 may run on 1 of this host's 2 CPUs.*--bind-to none/);
    assert.equal(singleCpuBindingWarning(0, 2, 2), null);
    assert.equal(singleCpuBindingWarning(0, 1, 1), null);
  });
});

describe("the mpi backend's shared-memory all-reduce when one rank's side cannot start", { skip: noAddon, concurrency: 2, timeout: 300_000 }, () => {
  // MPMD: rank 1 alone gets a shared-memory setting out of range.
  const run = (mode: string) =>
    new Promise<{ code: number | null; output: string; tasks: TaskOutput[] }>((resolve) => {
      const { env } = mpiEnv({ RINGTORCH_TEST_BACKEND: "mpi", RINGTORCH_MPI_ALLREDUCE: mode, RINGTORCH_QUIET: "0" });
      const rank = [process.execPath, ...WORKER("test/cluster/workers/mpi_fallback.ts")];
      const args = [...MPIRUN, "--mca", "orte_abort_on_non_zero_status", "0", "-np", "1", ...rank, ":", "-np", "1", "-x", "RINGTORCH_SHM_SLOTS=1", ...rank];
      execFile("mpirun", args, { env, cwd: ROOT, timeout: 240_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
        const output = stdout + stderr;
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output, tasks: untag(output, 2) });
      });
    });

  it("by default, every rank falls back to MPI_Allreduce (rank 0 warns why) and the sums are right", async () => {
    const job = await run("auto");
    assert.equal(job.code, 0, job.output);
    for (const [rank, t] of job.tasks.entries()) assert.match(t.stdout, new RegExp(`RESULT \\{"rank":${rank},"ok":true\\}`), job.output);
    assert.match(job.tasks[0]!.stderr, /the mpi backend all-reduces on MPI: the shared-memory transport did not start on rank\(s\) (0, )?1/, job.output);
  });

  it("with RINGTORCH_MPI_ALLREDUCE=shm, every rank fails init naming the rank whose side did not start", async () => {
    const job = await run("shm");
    // orte_abort_on_non_zero_status=0 lets both ranks print their error; mpirun then exits 0.
    assert.doesNotMatch(job.output, /RESULT/, job.output);
    assert.match(job.tasks[1]!.stderr, /RINGTORCH_MPI_ALLREDUCE=shm, but the shared-memory transport did not start on rank\(s\) (0, )?1 \(here: RINGTORCH_SHM_SLOTS/, job.output);
    assert.match(job.tasks[0]!.stderr, /RINGTORCH_MPI_ALLREDUCE=shm, but the shared-memory transport did not start on rank\(s\) (0, )?1/, job.output);
  });
});

// Each case runs twice: with every collective on Open MPI (RINGTORCH_MPI_ALLREDUCE=mpi), and as the
// backend runs by default, where a job on one host all-reduces on ringtorch's shared memory.
for (const mode of ["mpi", "auto"] as const) {
  const onMpi = (extra: Record<string, string> = {}) => mpiEnv({ RINGTORCH_TEST_BACKEND: "mpi", RINGTORCH_MPI_ALLREDUCE: mode, ...extra });
  const title = mode === "mpi" ? "every collective on Open MPI (RINGTORCH_MPI_ALLREDUCE=mpi)" : "on one host, all-reduce on ringtorch's shared memory and the rest on Open MPI (the default)";
  describe(`initProcessGroup({ backend: "mpi" }) under mpirun: ${title}`, { skip: noAddon, concurrency: 2, timeout: 900_000 }, () => {
    // 2 ranks with every collective on Open MPI, 3 by default (the DDP case below runs 3 ranks in
    // both modes): each launch costs every rank a Node start-up, and the cases are the same.
    for (const n of mode === "mpi" ? [2] : [3]) {
      it(`mpirun -np ${n}: the default backend's collective cases (every op and dtype, odd sizes, point-to-point, subgroups) match their reference`, async () => {
        const job = await mpirun(n, WORKER("test/distributed/workers/collectives.ts"), onMpi({ CASE_GRID: "small" }).env);
        checkCollectiveReports(job.code, job.tasks, n, job.output);
        for (const t of job.tasks) assert.match(t.stdout, /"transports":\["(self|mpi)"(,"(self|mpi)")*\]/);
        assert.doesNotMatch(job.output, /"shm"|"tcp"/, "the mpi backend reported ringtorch's transports");
      });
    }

    it("mpirun -np 3: DDP on the mpi backend takes the same steps as one process on the whole batch", async () => {
      const job = await mpirun(3, WORKER("test/parallel/workers/ddp_equivalence.ts"), onMpi().env);
      checkDdpEquivalence(job);
    });

    it("a rank that exits inside a collective: the others end with ringtorch's error naming it, and no process or shared memory is left", async () => {
      // MPI itself never notices a dead peer on shared memory; the mpi backend watches the pids of
      // the ranks on its host while it waits (and ringtorch's transport, its peers).
      const { env, marker } = onMpi({ DIE_BY: "exit" });
      const job = await mpirun(3, WORKER("test/cluster/workers/dies.ts"), env, ROOT, ["--mca", "orte_abort_on_non_zero_status", "0"]);
      checkDeathReported(job.tasks, 1, job.output, { othersMayFinish: mode === "mpi" });
      assert.deepEqual(processesWith(marker), []);
      const pids = job.tasks.map((t) => Number(/READY \d+ (\d+)/.exec(t.stdout)?.[1] ?? -1));
      assert.deepEqual(leftoverSegments(pids), []);
    });

    it("a rank killed by a signal inside a collective: mpirun fails the job and no process or shared memory is left", async () => {
      const { env, marker } = onMpi();
      const job = await mpirun(3, WORKER("test/cluster/workers/dies.ts"), env);
      assert.notEqual(job.code, 0, job.output);
      assert.deepEqual(processesWith(marker), []);
      const pids = job.tasks.map((t) => Number(/READY \d+ (\d+)/.exec(t.stdout)?.[1] ?? -1));
      assert.deepEqual(leftoverSegments(pids), []);
    });

    it("a rank that never calls the collective: the others fail past their timeout with ringtorch's error, and no process is left", async () => {
      const { env, marker } = onMpi({ DIE_BY: "stall" });
      const job = await mpirun(3, WORKER("test/cluster/workers/dies.ts"), env, ROOT, ["--mca", "orte_abort_on_non_zero_status", "0"]);
      // The first to time out ends; the other may see that exit before its own timeout.
      const timedOut = (rank: number) =>
        mode === "mpi"
          ? new RegExp(`DistributedError: allReduce #2 did not finish within 3000 ms on rank ${rank} \\(mpi backend\\)`)
          : new RegExp(`DistributedError: allReduce #2 failed on rank ${rank}: timed out after 3000 ms .*Ranks that never arrived at it: 1\\.`);
      const sawExit = (rank: number) => new RegExp(`DistributedError: allReduce #2 failed on rank ${rank}: (rank ${2 - rank} \\(pid \\d+\\) exited|.*Ranks that never arrived at it: (\\d+, )*1\\b)`);
      for (const rank of [0, 2]) assert.ok(timedOut(rank).test(job.tasks[rank]!.stderr) || sawExit(rank).test(job.tasks[rank]!.stderr), job.output);
      assert.ok([0, 2].some((rank) => timedOut(rank).test(job.tasks[rank]!.stderr)), job.output);
      assert.deepEqual(processesWith(marker), []);
    });
  });
}

// The hierarchical all-reduce across hosts, on one machine: RINGTORCH_MPI_TEST_HOSTS makes blocks of
// ranks believe they are on hosts of their own (only the grouping changes: the step between hosts
// still runs on Open MPI, over its shared memory here). RINGTORCH_MPI_ALLREDUCE=hier makes a path
// that did not start an error, so that a pass means the hierarchical path ran.
describe("the mpi backend's hierarchical all-reduce across (fake) hosts", { skip: noAddon, concurrency: 2, timeout: 900_000 }, () => {
  const onHosts = (hosts: string, extra: Record<string, string> = {}) => {
    const { env, marker } = mpiEnv({ RINGTORCH_TEST_BACKEND: "mpi", RINGTORCH_MPI_ALLREDUCE: "hier", RINGTORCH_MPI_TEST_HOSTS: hosts, ...extra });
    return { env, marker };
  };
  const checkHier = (job: { code: number | null; output: string; tasks: TaskOutput[] }, n: number) => {
    assert.equal(job.code, 0, job.output);
    for (const [rank, t] of job.tasks.entries()) {
      const line = t.stdout.split("\n").find((l) => l.startsWith("RESULT "));
      assert.ok(line, job.output);
      const outcome = JSON.parse(line.slice(7)) as { rank: number; failures: string[]; cases: number };
      assert.equal(outcome.rank, rank);
      assert.deepEqual(outcome.failures, []);
      assert.ok(outcome.cases > 90, `only ${outcome.cases} cases ran`);
    }
    assert.equal(job.tasks.length, n);
  };

  it("mpirun -np 4 as 2 hosts × 2: the default backend's collective cases (every op and dtype, odd sizes, progress while the main thread is busy) match their reference", async () => {
    const job = await mpirun(4, WORKER("test/distributed/workers/collectives.ts"), onHosts("2,2", { CASE_GRID: "small" }).env);
    checkCollectiveReports(job.code, job.tasks, 4, job.output);
  });

  it("mpirun -np 4 as 2 hosts × 2: float16, sizes around the ranks per host, all-reduces in flight beside other MPI operations", async () => {
    const job = await mpirun(4, WORKER("test/cluster/workers/mpi_hier.ts"), onHosts("2,2").env);
    checkHier(job, 4);
  });

  it("mpirun -np 6 as 3 hosts × 2: the same cases", async () => {
    const job = await mpirun(6, WORKER("test/cluster/workers/mpi_hier.ts"), onHosts("2,2,2").env);
    checkHier(job, 6);
  });

  it("mpirun -np 3 as hosts of 2 and 1: falls back to MPI_Allreduce (rank 0 says why) and the results are right", async () => {
    const job = await mpirun(3, WORKER("test/cluster/workers/mpi_hier.ts"), onHosts("2,1", { RINGTORCH_QUIET: "0" }).env);
    checkHier(job, 3);
    assert.match(job.tasks[0]!.stderr, /all-reduces on MPI_Allreduce across all ranks: the hierarchical all-reduce needs equally many ranks on every host, but the hosts run 2, 1/, job.output);
  });

  it("RINGTORCH_MPI_ALLREDUCE=hier on one host: every rank fails init saying why", async () => {
    const { env } = mpiEnv({ RINGTORCH_MPI_ALLREDUCE: "hier" });
    const job = await mpirun(2, WORKER("test/cluster/workers/mpi_fallback.ts"), env, ROOT, ["--mca", "orte_abort_on_non_zero_status", "0"]);
    assert.doesNotMatch(job.output, /RESULT/, job.output);
    for (const t of job.tasks) assert.match(t.stderr, /RINGTORCH_MPI_ALLREDUCE=hier needs ranks on several hosts, but every rank is on one/, job.output);
  });

  it("mpirun -np 4 as 2 hosts × 2: DDP takes the same steps as one process on the whole batch", async () => {
    const job = await mpirun(4, WORKER("test/parallel/workers/ddp_equivalence.ts"), onHosts("2,2").env);
    checkDdpEquivalence(job);
  });

  it("a rank that exits inside the all-reduce: every other rank, on its host or across, ends with ringtorch's error naming it", async () => {
    const { env, marker } = onHosts("2,2", { DIE_BY: "exit" });
    const job = await mpirun(4, WORKER("test/cluster/workers/dies.ts"), env, ROOT, ["--mca", "orte_abort_on_non_zero_status", "0"]);
    const pid = /READY \d+ (\d+)/.exec(job.tasks[1]!.stdout)?.[1];
    assert.ok(pid, job.output);
    // Rank 0 shares rank 1's host (it fails in the reduce-scatter); rank 3 waits on it between
    // hosts; rank 2 waits on rank 0, which has ended by then: its error names both.
    for (const rank of [0, 2, 3]) {
      assert.match(job.tasks[rank]!.stderr, new RegExp(`DistributedError: allReduce #2 failed on rank ${rank}: (rank 0 \\(pid \\d+\\) exited, )?rank 1 \\(pid ${pid}\\) exited`), job.output);
    }
    assert.deepEqual(processesWith(marker), []);
    const pids = job.tasks.map((t) => Number(/READY \d+ (\d+)/.exec(t.stdout)?.[1] ?? -1));
    assert.deepEqual(leftoverSegments(pids), []);
  });
});

/** Every rank of test/parallel/workers/ddp_equivalence.ts reports its 14 checks and no failure. */
function checkDdpEquivalence(job: { code: number | null; output: string; tasks: { stdout: string }[] }): void {
  assert.equal(job.code, 0, job.output);
  for (const t of job.tasks) {
    const line = t.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    assert.ok(line, job.output);
    const outcome = JSON.parse(line.slice(7)) as { failures: string[]; checks: string[] };
    assert.deepEqual(outcome.failures, []);
    assert.equal(outcome.checks.length, 14);
  }
}
