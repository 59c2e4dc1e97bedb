import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";
import { existsSync, readFileSync } from "node:fs";
import { eventually, freePort, liveInGroups, readJson, sleeperFixture, startRingrun, tempDir, workerFixture } from "./helpers.js";

interface RankReport {
  seen: number[];
  env: Record<string, string | undefined>;
}

const expectedSeen = (worldSize: number) => Array.from({ length: worldSize }, (_, r) => r * 10 + 1);

/** Two ringrun agents forming one job; `prefix` runs each one inside something (a network namespace). */
async function twoNodeJob(
  t: { after(fn: () => void): void },
  opts: { nprocs: [number, number]; masterAddr?: string; extra?: string[]; workerArgs?: string[]; prefixes?: [string[], string[]] },
) {
  const out = tempDir(t);
  const port = await freePort();
  const env = { RINGTORCH_STORE_TOKEN: randomBytes(32).toString("hex") };
  const agents = opts.nprocs.map((nproc, nodeRank) =>
    startRingrun(
      [
        "--nnodes", "2", "--node-rank", String(nodeRank), "--nproc-per-node", String(nproc),
        "--master-addr", opts.masterAddr ?? "127.0.0.1", "--master-port", String(port),
        "--rdzv-conf", "join_timeout=60", "--log-dir", join(out, `logs${nodeRank}`),
        ...(opts.extra ?? []), workerFixture, out, ...(opts.workerArgs ?? []),
      ],
      env,
      opts.prefixes?.[nodeRank] ?? [],
    ),
  );
  const results = await Promise.all(agents.map((a) => a.done));
  return { out, results };
}

test("two agents with --nnodes 2 on one machine run one job across all ranks", async (t) => {
  const { out, results } = await twoNodeJob(t, { nprocs: [1, 2] });
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const groupRanks = ["0", "1", "1"];
  for (let rank = 0; rank < 3; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.deepEqual(report.seen, expectedSeen(3));
    assert.deepEqual(
      [report.env.RANK, report.env.GROUP_RANK, report.env.LOCAL_RANK, report.env.WORLD_SIZE, report.env.LOCAL_WORLD_SIZE, report.env.GROUP_WORLD_SIZE],
      [String(rank), groupRanks[rank], String(rank === 2 ? 1 : 0), "3", rank === 0 ? "1" : "2", "2"],
    );
  }
  assert.equal(readJson<RankReport>(join(out, "rank0.json")).env.RINGTORCH_NUM_THREADS, undefined, "a rank alone on its node keeps every core");
});

test("a failure on one node restarts the workers of both nodes, which agree on the restart count", async (t) => {
  const { out, results } = await twoNodeJob(t, { nprocs: [1, 1], extra: ["--max-restarts", "1"], workerArgs: ["--throw-rank", "1", "--until-restart", "1"] });
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  for (let rank = 0; rank < 2; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.equal(report.env.RINGTORCH_RESTART_COUNT, "1", `rank ${rank} runs in the second attempt`);
    assert.deepEqual(report.seen, expectedSeen(2));
  }
  assert.match(results[0]!.stderr, /worker group failed \(rank 1 on .*planned failure on rank 1\); restarting/, "node 0 restarts for node 1's failure");
});

test("when restarts run out, every node fails and names the same root cause on the other node", async (t) => {
  const { results } = await twoNodeJob(t, { nprocs: [1, 1], workerArgs: ["--throw-rank", "1"] });
  for (const r of results) {
    assert.equal(r.code, 1);
    assert.match(r.stderr, /host {7}: .* \(node 1\)\n {2}rank {7}: 1 \(local rank 0\)/);
    assert.match(r.stderr, /error {6}: Error: planned failure on rank 1/);
  }
});

test("a node whose ringrun dies is noticed by the others through its heartbeat: they stop and report it", async (t) => {
  const out = tempDir(t);
  const port = await freePort();
  const env = { RINGTORCH_STORE_TOKEN: randomBytes(32).toString("hex") };
  const agents = [0, 1].map((nodeRank) =>
    startRingrun(
      ["--nnodes", "2", "--node-rank", String(nodeRank), "--master-port", String(port), "--rdzv-conf", "heartbeat_timeout=1.5,join_timeout=60", "--log-dir", join(out, `logs${nodeRank}`), sleeperFixture, out],
      env,
    ),
  );
  t.after(() => agents.forEach((a) => a.child.kill("SIGKILL")));
  assert.ok(await eventually(() => existsSync(join(out, "pids0")) && existsSync(join(out, "pids1")), 30_000), "both nodes' workers started");
  agents[1]!.child.kill("SIGKILL");
  const survivor = await agents[0]!.done;
  // (With restarts left, the survivor would wait up to join_timeout for node 1 to come back.)
  assert.equal(survivor.code, 1);
  assert.match(survivor.stderr, /NodeLost: the ringrun of node 1 on .* stopped answering/);
  const workerPids = [0, 1].map((r) => Number(readFileSync(join(out, `pids${r}`), "utf8").split(" ")[0]));
  assert.ok(await eventually(() => liveInGroups(workerPids).length === 0, 15_000), "no worker of either node is left");
});

test("c10d with --nnodes 1:2: a node that arrives while the job runs joins it through a restart that costs no restart count", async (t) => {
  const out = tempDir(t);
  const port = await freePort();
  const env = { RINGTORCH_STORE_TOKEN: randomBytes(32).toString("hex") };
  const start = (name: string) =>
    startRingrun(
      ["--rdzv-backend", "c10d", "--rdzv-endpoint", `127.0.0.1:${port}`, "--nnodes", "1:2", "--rdzv-conf", "last_call_timeout=0.2,join_timeout=60", "--log-dir", join(out, name), workerFixture, out, "--min-world", "2"],
      env,
    );
  const first = start("first");
  t.after(() => first.child.kill("SIGKILL"));
  // The first node starts alone (MIN is 1) and its worker idles until the job has two ranks.
  assert.ok(await eventually(() => existsSync(join(out, "first", "none", "attempt_0", "0")), 30_000), "the first node started alone");
  const second = start("second");
  t.after(() => second.child.kill("SIGKILL"));
  const results = await Promise.all([first.done, second.done]);
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  for (let rank = 0; rank < 2; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.deepEqual(report.seen, expectedSeen(2));
    assert.deepEqual([report.env.WORLD_SIZE, report.env.RINGTORCH_RESTART_COUNT, report.env.RINGTORCH_STORE_PREFIX], ["2", "0", "/worker/attempt_1/"]);
  }
});

function sh(args: string[]): boolean {
  return spawnSync(args[0]!, args.slice(1), { stdio: "ignore" }).status === 0;
}

test("two agents in separate network namespaces, joined by a veth pair, run one job", async (t) => {
  const id = `${process.pid % 100000}`;
  const [nsA, nsB, vethA, vethB] = [`rrA${id}`, `rrB${id}`, `rrva${id}`, `rrvb${id}`];
  if (process.getuid?.() !== 0 || !sh(["ip", "netns", "add", nsA])) {
    t.skip("network namespaces cannot be made here (needs root and `ip netns`)");
    return;
  }
  t.after(() => {
    sh(["ip", "netns", "del", nsA]);
    sh(["ip", "netns", "del", nsB]);
  });
  const setup = [
    ["ip", "netns", "add", nsB],
    ["ip", "link", "add", vethA, "type", "veth", "peer", "name", vethB],
    ["ip", "link", "set", vethA, "netns", nsA],
    ["ip", "link", "set", vethB, "netns", nsB],
    ["ip", "-n", nsA, "addr", "add", "10.213.7.1/24", "dev", vethA],
    ["ip", "-n", nsB, "addr", "add", "10.213.7.2/24", "dev", vethB],
    ["ip", "-n", nsA, "link", "set", "lo", "up"],
    ["ip", "-n", nsB, "link", "set", "lo", "up"],
    ["ip", "-n", nsA, "link", "set", vethA, "up"],
    ["ip", "-n", nsB, "link", "set", vethB, "up"],
  ];
  for (const step of setup) {
    if (!sh(step)) {
      sh(["ip", "link", "del", vethA]);
      t.skip(`could not set up the namespaces: \`${step.join(" ")}\` failed`);
      return;
    }
  }
  const inNs = (ns: string) => ["ip", "netns", "exec", ns, process.execPath];
  const { out, results } = await twoNodeJob(t, { nprocs: [1, 1], masterAddr: "10.213.7.1", prefixes: [inNs(nsA), inNs(nsB)] });
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  for (let rank = 0; rank < 2; rank++) {
    const report = readJson<RankReport>(join(out, `rank${rank}.json`));
    assert.deepEqual(report.seen, expectedSeen(2));
    assert.equal(report.env.MASTER_ADDR, "10.213.7.1");
  }
});
