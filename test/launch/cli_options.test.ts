import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { FLAGS, helpText, parseArgs, UsageError } from "../../src/launch/cli_options.js";
import { firstSlurmHost } from "../../src/launch/cluster_env.js";
import { resolveConfig, streamsToFile } from "../../src/launch/launch_config.js";
import { repoRoot, workerFixture } from "./helpers.js";

const script = "test/launch/fixtures/worker.ts";
const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => resolveConfig(parseArgs(argv), env, repoRoot);

test("flags parse in kebab and snake case, with = or a separate value, and the script keeps its own arguments", () => {
  const parsed = parseArgs(["--nproc_per_node=3", "--max-restarts", "2", "-r3", "-t", "0:1", "--standalone", script, "--lr", "0.1", "--nnodes", "9"]);
  assert.equal(parsed.given.get("nproc-per-node"), "3");
  assert.equal(parsed.given.get("max-restarts"), "2");
  assert.equal(parsed.given.get("redirects"), "3");
  assert.equal(parsed.given.get("tee"), "0:1");
  assert.equal(parsed.given.get("standalone"), "1");
  assert.equal(parsed.script, script);
  assert.deepEqual(parsed.scriptArgs, ["--lr", "0.1", "--nnodes", "9"]);
  assert.equal(parsed.given.has("nnodes"), false);
});

test("an unknown flag, a flag without its value and a value given to a switch are usage errors naming the flag", () => {
  assert.throws(() => parseArgs(["--nproc-per-nod", "2", script]), (e: Error) => e instanceof UsageError && /--nproc-per-nod\b/.test(e.message));
  assert.throws(() => parseArgs(["--max-restarts"]), /--max-restarts expects a value/);
  assert.throws(() => parseArgs(["--standalone=yes", script]), /--standalone takes no value/);
  assert.throws(() => parseArgs(["-x", script]), /unknown option -x/);
});

test("--help names every flag, its snake_case spelling aside", () => {
  const help = helpText();
  for (const flag of FLAGS) assert.ok(help.includes(`--${flag.name}`), `--help does not mention --${flag.name}`);
  assert.ok(help.includes("-r, --redirects") && help.includes("-m, --module"));
});

test("torchrun's defaults: one node, one process, static rendezvous at 127.0.0.1:29500, run id 'none', no restarts", () => {
  const c = config([script]);
  assert.deepEqual([c.minNodes, c.maxNodes, c.nprocPerNode, c.nodeRank], [1, 1, 1, 0]);
  assert.deepEqual([c.backend, c.storeHost, c.storePort, c.runId, c.role], ["static", "127.0.0.1", 29500, "none", "default"]);
  assert.deepEqual([c.maxRestarts, c.monitorIntervalMs, c.rendezvous.joinTimeoutMs], [0, 100, 600_000]);
  assert.deepEqual(c.entry, { kind: "script", path: workerFixture });
  assert.equal(c.token.length, 64, "a single-node job gets a generated 32-byte token");
});

test("--standalone takes a free port and a fresh run id and token on every start", () => {
  const [a, b] = [config(["--standalone", script]), config(["--standalone", script])];
  assert.equal(a.storePort, 0);
  assert.notEqual(a.runId, b.runId);
  assert.notEqual(a.token, b.token);
  assert.throws(() => config(["--standalone", "--nnodes", "2", script], { RINGTORCH_STORE_TOKEN: "t".repeat(32) }), /--standalone runs a single-node job/);
});

test("--nproc-per-node accepts a positive count or auto/cpu and refuses 0, gpu and words", () => {
  assert.equal(config(["--nproc-per-node", "auto", script]).nprocPerNode, availableParallelism());
  assert.equal(config(["--nproc-per-node", "cpu", script]).nprocPerNode, availableParallelism());
  assert.throws(() => config(["--nproc-per-node", "0", script]), /--nproc-per-node expects a positive integer.*got '0'/);
  assert.throws(() => config(["--nproc-per-node", "gpu", script]), /runs on CPUs/);
  assert.throws(() => config(["--nproc-per-node", "two", script]), /got 'two'/);
});

test("a multi-node job needs RINGTORCH_STORE_TOKEN and says how to make one", () => {
  assert.throws(() => config(["--nnodes", "2", script]), /RINGTORCH_STORE_TOKEN.*randomBytes/);
  assert.equal(config(["--nnodes", "2", script], { RINGTORCH_STORE_TOKEN: "shared-secret" }).token, "shared-secret");
});

test("MIN:MAX needs c10d; node ranks must fit --nnodes; endpoints parse with c10d's default port", () => {
  const env = { RINGTORCH_STORE_TOKEN: "s" };
  assert.throws(() => config(["--nnodes", "1:3", script], env), /needs an elastic rendezvous/);
  assert.throws(() => config(["--nnodes", "2", "--node-rank", "2", script], env), /--node-rank 2 is out of range/);
  const c = config(["--nnodes", "1:3", "--rdzv-backend", "c10d", "--rdzv-endpoint", "10.0.0.7", script], env);
  assert.deepEqual([c.minNodes, c.maxNodes, c.storeHost, c.storePort], [1, 3, "10.0.0.7", 29400]);
  const s = config(["--nnodes", "2", "--rdzv-endpoint", "node3:1234", "--master-port", "99", script], env);
  assert.deepEqual([s.storeHost, s.storePort], ["node3", 1234]);
  assert.throws(() => config(["--nnodes", "3:2", script], env), /1 <= MIN <= MAX/);
});

test("a missing script, -m, --no-python and --run-path resolve to the entry they name", () => {
  assert.throws(() => config(["nope/train.ts"]), (e: Error) => e instanceof UsageError && e.message.includes(join(repoRoot, "nope/train.ts")));
  assert.throws(() => config([]), /no training script given/);
  assert.deepEqual(config(["-m", "./pkg/train.ts"]).entry, { kind: "module", specifier: "./pkg/train.ts" });
  assert.deepEqual(config(["--no-python", "bash", "-c", "true"]).entry, { kind: "executable", command: "bash" });
  assert.deepEqual(config(["--no_node", "bash"]).entry, { kind: "executable", command: "bash" });
  assert.deepEqual(config(["--run-path", script]).entry, { kind: "run-path", path: workerFixture });
});

test("--redirects/--tee take one value for all local ranks or per-rank pairs", () => {
  const c = config(["-r", "0:1,2:3", "-t", "2", script]);
  assert.deepEqual(streamsToFile(c.redirects, 0), { stdout: true, stderr: false });
  assert.deepEqual(streamsToFile(c.redirects, 1), { stdout: false, stderr: false });
  assert.deepEqual(streamsToFile(c.redirects, 2), { stdout: true, stderr: true });
  assert.deepEqual(streamsToFile(c.tee, 5), { stdout: false, stderr: true });
  assert.throws(() => config(["-r", "4", script]), /--redirects expects 0-3/);
  assert.deepEqual([...config(["--local-ranks-filter", "0,2", script]).localRanksFilter!], [0, 2]);
});

test("--rdzv-conf sets the rendezvous timeouts in seconds", () => {
  const c = config(["--rdzv-conf", "join_timeout=5,last_call_timeout=0.5,heartbeat_timeout=3", script]);
  assert.deepEqual(c.rendezvous, { joinTimeoutMs: 5000, lastCallTimeoutMs: 500, heartbeatTimeoutMs: 3000, exitBarrierTimeoutMs: 300_000 });
  assert.throws(() => config(["--rdzv-conf", "join_timeout=-1", script]), /join_timeout/);
});

test("under Slurm the node layout and run id come from its variables, and explicit flags win", () => {
  const slurm = { SLURM_JOB_ID: "4711", SLURM_NNODES: "4", SLURM_NODEID: "2", SLURM_JOB_NODELIST: "gpu[07-09,12],cpu1", RINGTORCH_STORE_TOKEN: "s" };
  const c = config([script], slurm);
  assert.deepEqual([c.maxNodes, c.nodeRank, c.storeHost, c.storePort, c.runId], [4, 2, "gpu07", 19711, "4711"]);
  // Inside srun, the step's nodes: `srun -N 2` in a 4-node allocation is a 2-node job.
  const step = config([script], { ...slurm, SLURM_STEP_NUM_NODES: "2", SLURM_NODEID: "1", SLURM_STEP_NODELIST: "gpu[08,12]" });
  assert.deepEqual([step.maxNodes, step.nodeRank, step.storeHost], [2, 1, "gpu08"]);
  const flags = config(["--nnodes", "2", "--node-rank", "1", "--master-addr", "10.1.1.1", "--rdzv-id", "mine", script], slurm);
  assert.deepEqual([flags.maxNodes, flags.nodeRank, flags.storeHost, flags.runId], [2, 1, "10.1.1.1", "mine"]);
});

test("a PyTorchJob-style environment gives node count, node rank and master address", () => {
  const env = { MASTER_ADDR: "job-master-0", MASTER_PORT: "23456", WORLD_SIZE: "3", RANK: "1", RINGTORCH_STORE_TOKEN: "s" };
  const c = config([script], env);
  assert.deepEqual([c.maxNodes, c.nodeRank, c.storeHost, c.storePort], [3, 1, "job-master-0", 23456]);
  // Inside a ringrun worker the same names describe the worker, not the node.
  const nested = config([script], { ...env, RINGTORCH_AGENT_PID: "1" });
  assert.deepEqual([nested.maxNodes, nested.storeHost], [1, "127.0.0.1"]);
});

test("PET_ variables stand in for flags, as torchrun's do", () => {
  const c = config([script], { PET_NPROC_PER_NODE: "3", PET_MAX_RESTARTS: "4" });
  assert.deepEqual([c.nprocPerNode, c.maxRestarts], [3, 4]);
  assert.equal(config(["--nproc-per-node", "2", script], { PET_NPROC_PER_NODE: "3" }).nprocPerNode, 2);
});

test("Slurm node lists: the first host, ranges and zero padding kept", () => {
  assert.equal(firstSlurmHost("node01"), "node01");
  assert.equal(firstSlurmHost("gpu[07-09,12],cpu1"), "gpu07");
  assert.equal(firstSlurmHost("a1,b[2-3]"), "a1");
  assert.equal(firstSlurmHost("rack[1-2]-n[3,5]"), "rack1-n3");
});
