import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { snapshotFlags } from "../../src/launch/node_snapshot.js";
import { childNodeFlags, semiSpaceFlags, workerYoungGenerationMb } from "../../src/launch/young_generation.js";
import { repoRoot, runRingrun } from "./helpers.js";

const fixture = join(repoRoot, "test/launch/fixtures/node_flags.ts");
const NO = "--no-node-snapshot";
const SEMI = "--max-semi-space-size=1";

interface Seen {
  execArgv: string[];
  sum: number;
  thread: boolean;
}

function seenIn(stdout: string): Seen[] {
  return stdout.split("\n").flatMap((l) => {
    const m = /FLAGS \d+ (\{.*\})$/.exec(l);
    return m ? [JSON.parse(m[1]!) as Seen] : [];
  });
}

// The fixture's x + x summed, with plain numbers (exact in float32 at this size).
let WANT_SUM = 0;
for (let i = 0; i < 65536; i++) WANT_SUM += 2 * (i % 7);

function check(seen: Seen[], n: number, hasFlag: boolean, output: string, hasSemi = false): void {
  assert.equal(seen.length, n, output);
  for (const s of seen) {
    assert.equal(s.execArgv.includes(NO), hasFlag, `execArgv ${JSON.stringify(s.execArgv)}`);
    assert.equal(s.execArgv.includes(SEMI), hasSemi, `execArgv ${JSON.stringify(s.execArgv)}`);
    assert.equal(s.sum, WANT_SUM);
    assert.ok(s.thread, "the worker thread did not answer");
  }
}

describe("snapshotFlags", () => {
  it("adds --no-node-snapshot unless the node flags, NODE_OPTIONS or RINGTORCH_NODE_SNAPSHOT choose", () => {
    assert.deepEqual(snapshotFlags(["--import", "tsx"], {}), [NO]);
    assert.deepEqual(snapshotFlags(["--node-snapshot"], {}), []);
    assert.deepEqual(snapshotFlags([NO], {}), []);
    assert.deepEqual(snapshotFlags(["--snapshot-blob=x.blob"], {}), []);
    assert.deepEqual(snapshotFlags([], { NODE_OPTIONS: "--max-old-space-size=4096  --node-snapshot" }), []);
    assert.deepEqual(snapshotFlags([], { NODE_OPTIONS: "--max-old-space-size=4096" }), [NO]);
    assert.deepEqual(snapshotFlags([], { RINGTORCH_NODE_SNAPSHOT: "1" }), []);
    assert.deepEqual(snapshotFlags([], { RINGTORCH_NODE_SNAPSHOT: "0" }), [NO]);
    assert.deepEqual(snapshotFlags([], {}, true), []);
    assert.throws(() => snapshotFlags([], { RINGTORCH_NODE_SNAPSHOT: "yes please" }), /RINGTORCH_NODE_SNAPSHOT: expected 1/);
  });
});

describe("semiSpaceFlags and a replica thread's young generation", () => {
  it("a replica thread gets a 3 MiB young generation (1 MiB semi-spaces), a process V8's default, unless the node flags, NODE_OPTIONS or RINGTORCH_SEMI_SPACE_MB choose", () => {
    assert.deepEqual(semiSpaceFlags(["--import", "tsx"], {}), []);
    assert.deepEqual(semiSpaceFlags(["--import", "tsx"], { RINGTORCH_SEMI_SPACE_MB: "1" }), [SEMI]);
    assert.equal(workerYoungGenerationMb([], {}), 3);
    for (const flags of [["--max-semi-space-size=8"], ["--max_semi_space_size", "8"]]) {
      assert.deepEqual(semiSpaceFlags(flags, { RINGTORCH_SEMI_SPACE_MB: "1" }), []);
      assert.equal(workerYoungGenerationMb(flags, {}), undefined);
    }
    assert.deepEqual(semiSpaceFlags([], { NODE_OPTIONS: "--max-old-space-size=4096 --max-semi-space-size=4", RINGTORCH_SEMI_SPACE_MB: "1" }), []);
    assert.deepEqual(semiSpaceFlags([], { RINGTORCH_SEMI_SPACE_MB: "4" }), ["--max-semi-space-size=4"]);
    assert.equal(workerYoungGenerationMb([], { RINGTORCH_SEMI_SPACE_MB: "4" }), 12);
    assert.deepEqual(semiSpaceFlags([], { RINGTORCH_SEMI_SPACE_MB: "0" }), []);
    assert.equal(workerYoungGenerationMb([], { RINGTORCH_SEMI_SPACE_MB: "0" }), undefined);
    assert.throws(() => semiSpaceFlags([], { RINGTORCH_SEMI_SPACE_MB: "1.5" }), /RINGTORCH_SEMI_SPACE_MB: expected a whole number of MiB/);
    assert.deepEqual(childNodeFlags([], {}), [NO]);
    assert.deepEqual(childNodeFlags([], { RINGTORCH_SEMI_SPACE_MB: "1" }), [NO, SEMI]);
    assert.deepEqual(childNodeFlags([], { RINGTORCH_NODE_SNAPSHOT: "1", RINGTORCH_SEMI_SPACE_MB: "2" }), ["--max-semi-space-size=2"]);
  });
});

describe("processes ringtorch starts run without Node's startup snapshot, with the semi-space asked for", { concurrency: 1 }, () => {
  it("ringrun's ranks have --no-node-snapshot; --node-snapshot and NODE_OPTIONS keep Node's default; RINGTORCH_SEMI_SPACE_MB=1 adds --max-semi-space-size=1", async () => {
    const base = ["--standalone", "--nproc-per-node", "2"];
    // The semi-space as ringtorch sets it by default, whatever the environment running the tests says.
    const defaults = { RINGTORCH_SEMI_SPACE_MB: "" };
    const plain = await runRingrun([...base, fixture], defaults);
    assert.equal(plain.code, 0, plain.stderr);
    check(seenIn(plain.stdout), 2, true, plain.stdout + plain.stderr);
    const kept = await runRingrun([...base, "--node-snapshot", fixture], defaults);
    assert.equal(kept.code, 0, kept.stderr);
    check(seenIn(kept.stdout), 2, false, kept.stdout + kept.stderr);
    const user = await runRingrun(["--standalone", "--nproc-per-node", "1", fixture], { NODE_OPTIONS: "--node-snapshot", RINGTORCH_SEMI_SPACE_MB: "1" });
    assert.equal(user.code, 0, user.stderr);
    check(seenIn(user.stdout), 1, false, user.stdout + user.stderr, true);
  });

  it("ringrun refuses a RINGTORCH_NODE_SNAPSHOT it cannot read", async () => {
    const r = await runRingrun(["--standalone", fixture], { RINGTORCH_NODE_SNAPSHOT: "maybe" });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /RINGTORCH_NODE_SNAPSHOT: expected 1/);
  });

  it("ringrun refuses a RINGTORCH_SEMI_SPACE_MB it cannot read", async () => {
    const r = await runRingrun(["--standalone", fixture], { RINGTORCH_SEMI_SPACE_MB: "lots" });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /ringrun: error: RINGTORCH_SEMI_SPACE_MB: expected a whole number of MiB/);
  });

  for (const [parentFlags, hasFlag, what] of [
    [[], true, "spawn()'s children have it"],
    [["--node-snapshot"], false, "a parent started with --node-snapshot passes its choice on"],
  ] as const) {
    it(what, () => {
      const env = { ...process.env };
      for (const key of ["RINGTORCH_STORE_TOKEN", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "NODE_OPTIONS", "RINGTORCH_SEMI_SPACE_MB", "RINGTORCH_NODE_SNAPSHOT"]) delete env[key];
      const r = spawnSync(process.execPath, [...parentFlags, "--import", "tsx", "--conditions=source", fixture, "spawn"], { cwd: repoRoot, env, encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const seen = seenIn(r.stdout);
      check(seen, 1, hasFlag, r.stdout + r.stderr);
      if (!hasFlag) assert.ok(seen[0]!.execArgv.includes("--node-snapshot"));
    });
  }
});
