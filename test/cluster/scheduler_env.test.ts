import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { resolveRendezvous } from "../../src/distributed/rendezvous.js";
import { readTokenFileEnv } from "../../src/distributed/token_file.js";
import { defaultNumThreads } from "../../src/backend/cpu/threads.js";
import { firstSlurmHost, schedulerWorld, tasksOnNode } from "../../src/util/scheduler_env.js";

// The variables srun 22.05 sets in a task (names as a real srun set them), with the values task 2
// of `srun -N 2 -n 3` gets on the second node, and node lists in compressed forms.
const srunTask = {
  SLURM_JOB_ID: "4711",
  SLURM_STEP_ID: "0",
  SLURM_PROCID: "2",
  SLURM_LOCALID: "0",
  SLURM_NODEID: "1",
  SLURM_NTASKS: "3",
  SLURM_STEP_NUM_TASKS: "3",
  SLURM_STEP_TASKS_PER_NODE: "2,1",
  SLURM_STEP_NODELIST: "n[01-03,7],gpu5",
  SLURM_JOB_NODELIST: "n[01-03,7],gpu5,login1",
};

test("Slurm node lists: the first host in every compressed form", () => {
  const cases: [string, string][] = [
    ["node01", "node01"],
    ["n[01-03,7],gpu5", "n01"],
    ["gpu[07-09,12],cpu1", "gpu07"],
    ["a1,b[2-3]", "a1"],
    ["rack[1-2]-n[3,5]", "rack1-n3"],
    ["n[7,01-03]", "n7"],
    ["n[003]", "n003"],
    ["n[1-2]x,m", "n1x"],
    ["c-[10-11]-ib", "c-10-ib"],
  ];
  for (const [list, first] of cases) assert.equal(firstSlurmHost(list), first, list);
  assert.throws(() => firstSlurmHost("n[01-03"), /unbalanced brackets/);
});

test("Slurm's tasks-per-node form: counts with (xN) repeats", () => {
  assert.equal(tasksOnNode("2(x3),1", 0), 2);
  assert.equal(tasksOnNode("2(x3),1", 2), 2);
  assert.equal(tasksOnNode("2(x3),1", 3), 1);
  assert.equal(tasksOnNode("2(x3),1", 4), undefined);
  assert.equal(tasksOnNode("4", 0), 4);
});

test("a task of an srun step: rank, world, local layout, first node of the step and a port from the job id", () => {
  assert.deepEqual(schedulerWorld(srunTask), {
    source: "Slurm",
    rank: 2,
    worldSize: 3,
    localRank: 0,
    localWorldSize: 1,
    masterAddr: "n01",
    masterPort: 15000 + 4711,
    jobId: "4711.0",
  });
  // Job 123456 wraps into the same 10000-port window.
  assert.equal(schedulerWorld({ ...srunTask, SLURM_JOB_ID: "123456" })!.masterPort, 15000 + 3456);
  // Older Slurm names the step SLURM_STEPID only.
  const { SLURM_STEP_ID: __, ...oldNames } = srunTask;
  assert.equal(schedulerWorld({ ...oldNames, SLURM_STEPID: "3" })!.jobId, "4711.3");
  // Without the step's list, the job's.
  const { SLURM_STEP_NODELIST: _, ...jobOnly } = srunTask;
  assert.equal(schedulerWorld(jobOnly)!.masterAddr, "n01");
});

test("a batch script is one process, not rank 0 of the job's tasks", () => {
  const batch = { SLURM_JOB_ID: "5", SLURM_PROCID: "0", SLURM_NTASKS: "2", SLURM_NODELIST: "vm" };
  assert.equal(schedulerWorld(batch), undefined);
  assert.equal(resolveRendezvous({}, batch).worldSize, 1);
});

test("Open MPI and PMI ranks; MPI wins over the Slurm allocation it runs in", () => {
  const ompi = { OMPI_COMM_WORLD_RANK: "1", OMPI_COMM_WORLD_SIZE: "3", OMPI_COMM_WORLD_LOCAL_RANK: "1", OMPI_COMM_WORLD_LOCAL_SIZE: "3", PMIX_NAMESPACE: "prterun-vm-123@1" };
  const w = schedulerWorld({ ...srunTask, ...ompi })!;
  assert.deepEqual([w.source, w.rank, w.worldSize, w.localRank, w.localWorldSize, w.masterAddr], ["Open MPI", 1, 3, 1, 3, "127.0.0.1"]);
  assert.ok(w.masterPort >= 15000 && w.masterPort < 25000);
  // Every rank of one mpirun derives the same port; another mpirun, another.
  assert.equal(schedulerWorld({ ...ompi, OMPI_COMM_WORLD_RANK: "0" })!.masterPort, w.masterPort);
  assert.notEqual(schedulerWorld({ ...ompi, PMIX_NAMESPACE: "prterun-vm-124@1" })!.masterPort, w.masterPort);
  const pmi = schedulerWorld({ PMI_RANK: "4", PMI_SIZE: "8", MPI_LOCALRANKID: "0", MPI_LOCALNRANKS: "4", PMI_KVSNAME: "kvs_99_0" })!;
  assert.deepEqual([pmi.source, pmi.rank, pmi.worldSize, pmi.localRank, pmi.localWorldSize, pmi.masterAddr], ["PMI", 4, 8, 0, 4, undefined]);
});

test("bad scheduler variables are errors that name the variable", () => {
  assert.throws(() => schedulerWorld({ ...srunTask, SLURM_PROCID: "3" }), /Slurm: SLURM_PROCID=3 is not a rank of a job of SLURM_STEP_NUM_TASKS=3/);
  assert.throws(() => schedulerWorld({ ...srunTask, SLURM_STEP_NUM_TASKS: "three" }), /SLURM_STEP_NUM_TASKS must be a non-negative integer, got "three"/);
  assert.throws(() => schedulerWorld({ OMPI_COMM_WORLD_SIZE: "2" }), /OMPI_COMM_WORLD_RANK must be a non-negative integer, got undefined/);
});

test("initProcessGroup's rendezvous: the scheduler fills in only what RANK/WORLD_SIZE and MASTER_* leave out", () => {
  const r = resolveRendezvous({}, srunTask);
  assert.deepEqual([r.host, r.port, r.rank, r.worldSize, r.agentStore], ["n01", 19711, 2, 3, false]);
  const own = resolveRendezvous({}, { ...srunTask, MASTER_ADDR: "10.0.0.9", MASTER_PORT: "29500" });
  assert.deepEqual([own.host, own.port, own.rank], ["10.0.0.9", 29500, 2]);
  // ringrun's workers (and torchrun-style launches) carry RANK: their contract wins.
  const launched = resolveRendezvous({}, { ...srunTask, RANK: "0", WORLD_SIZE: "8", MASTER_ADDR: "h", MASTER_PORT: "1" });
  assert.deepEqual([launched.rank, launched.worldSize, launched.scheduler], [0, 8, undefined]);
  // Ranks on several hosts under mpirun: no variable names rank 0's host.
  assert.throws(
    () => resolveRendezvous({}, { OMPI_COMM_WORLD_RANK: "0", OMPI_COMM_WORLD_SIZE: "4", OMPI_COMM_WORLD_LOCAL_SIZE: "2" }),
    /Open MPI started 4 ranks across hosts \(2 on this one\).*set MASTER_ADDR/,
  );
});

test("the cpu backend takes one thread per task when the scheduler put several on this host", () => {
  assert.equal(defaultNumThreads({ ...srunTask, SLURM_STEP_TASKS_PER_NODE: "2,1", SLURM_NODEID: "0" }), 1);
  assert.equal(defaultNumThreads({ OMPI_COMM_WORLD_RANK: "0", OMPI_COMM_WORLD_SIZE: "2", OMPI_COMM_WORLD_LOCAL_SIZE: "2" }), 1);
  assert.equal(defaultNumThreads({ ...srunTask, RINGTORCH_NUM_THREADS: "3" }), 3);
});

test("RINGTORCH_STORE_TOKEN_FILE: read when private to this user, refused with the fix otherwise", () => {
  const dir = mkdtempSync(join(tmpdir(), "token-"));
  const file = join(dir, "job.token");
  writeFileSync(file, "s3cret\n", { mode: 0o600 });
  assert.equal(readTokenFileEnv({ RINGTORCH_STORE_TOKEN_FILE: file }), "s3cret");
  assert.equal(readTokenFileEnv({}), undefined);
  chmodSync(file, 0o640);
  assert.throws(() => readTokenFileEnv({ RINGTORCH_STORE_TOKEN_FILE: file }), /is readable by others \(mode 640\).*chmod 600/);
  chmodSync(file, 0o604);
  assert.throws(() => readTokenFileEnv({ RINGTORCH_STORE_TOKEN_FILE: file }), /mode 604/);
  writeFileSync(join(dir, "empty"), "", { mode: 0o600 });
  assert.throws(() => readTokenFileEnv({ RINGTORCH_STORE_TOKEN_FILE: join(dir, "empty") }), /is empty/);
  assert.throws(() => readTokenFileEnv({ RINGTORCH_STORE_TOKEN_FILE: join(dir, "missing") }), /cannot read the job token file \(ENOENT\)/);
});

// Where mpicxx built the addon, the backend itself runs under real mpirun in test/cluster/mpi.test.ts.
const mpiAddonBuilt = existsSync(new URL("../../build/Release/ringtorch_mpi.node", import.meta.url));
test('initProcessGroup({ backend: "mpi" }) without the MPI addon says how to get it and what runs under mpirun instead', { skip: mpiAddonBuilt ? "the MPI addon is built (see test/cluster/mpi.test.ts)" : false }, async () => {
  const dist = await import("../../src/distributed/index.js");
  await assert.rejects(dist.initProcessGroup({ backend: "mpi" }), /backend "mpi" needs the MPI addon .*libopenmpi-dev.*Under mpirun without it, leave the backend out/s);
  assert.equal(dist.isInitialized(), false);
});
