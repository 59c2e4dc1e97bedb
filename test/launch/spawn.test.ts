import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { nodeScriptArgs } from "../child_node.js";
import { eventually, isLive, liveInGroups, repoRoot } from "./helpers.js";

const fixture = join(repoRoot, "test/launch/fixtures/spawner.ts");

function start(args: string[]) {
  const base = { ...process.env };
  for (const key of ["RINGTORCH_STORE_TOKEN", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"]) delete base[key];
  const child = spawnProcess(process.execPath, [...nodeScriptArgs(fixture), ...args], { cwd: repoRoot, env: base, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, done, out: () => stdout, err: () => stderr };
}

function resultOf(stdout: string): Record<string, unknown> {
  const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
  assert.ok(line, `no RESULT line in:\n${stdout}`);
  return JSON.parse(line.slice(7)) as Record<string, unknown>;
}

describe("spawn()", { concurrency: 1 }, () => {
  // One spawn per world size keeps this fast; join: false is exercised at 2.
  for (const [n, how] of [[1, "joined"], [2, "context"], [3, "joined"]] as const) {
    it(`runs ${n} process${n > 1 ? "es" : ""} with ringrun's environment; collectives match the reference (${how === "joined" ? "joined" : "join: false, then join(timeout)"})`, async () => {
      const run = start(["collectives", String(n), how]);
      const { code } = await run.done;
      assert.equal(code, 0, run.out() + run.err());
      const done = run.out().split("\n").filter((l) => l.startsWith("RANKDONE ")).sort();
      assert.deepEqual(done, Array.from({ length: n }, (_, r) => `RANKDONE ${how} ${r}`).sort());
      const { pids } = resultOf(run.out()) as { pids: number[] };
      assert.equal(pids.length, how === "joined" ? 0 : n);
      for (const pid of pids) assert.ok(!isLive(pid), `child ${pid} outlived its join()`);
    });
  }

  it("a raising rank rejects with ProcessRaisedException naming it, with its stack; the other ranks are stopped", async () => {
    const run = start(["raise", "3"]);
    const { code } = await run.done;
    assert.equal(code, 0, run.out() + run.err());
    const r = resultOf(run.out()) as { name: string; isRaised: boolean; errorIndex: number; message: string };
    assert.equal(r.name, "ProcessRaisedException");
    assert.ok(r.isRaised);
    assert.equal(r.errorIndex, 1);
    assert.match(r.message, /^process 1 \(pid \d+\) terminated with the following error:/);
    assert.match(r.message, /Error: rank one refuses/);
    // The fixture's frame, in spawner.ts or in the runner's compiled copy of it (child_node.ts).
    assert.match(r.message, /at raising \(.*spawner(\.ts|\.rt-\w+\.mjs):\d+:\d+\)/);
    const pids = run.out().split("\n").filter((l) => l.startsWith("PID ")).map((l) => Number(l.split(" ")[2]));
    assert.equal(pids.length, 3);
    for (const pid of pids) assert.ok(!isLive(pid), `rank with pid ${pid} outlived the failure`);
  });

  for (const signal of ["SIGINT", "SIGKILL"] as const) {
    it(`${signal} to the parent leaves no child or grandchild behind`, async () => {
      const run = start(["hang", "2"]);
      const pidLines = (): string[] => run.out().split("\n").filter((l) => l.startsWith("PIDS "));
      assert.ok(await eventually(() => pidLines().length === 2, 60_000), `children did not start:\n${run.out()}${run.err()}`);
      const pids = pidLines().flatMap((l) => l.split(" ").slice(2).map(Number));
      const groups = pidLines().map((l) => Number(l.split(" ")[2]));
      run.child.kill(signal);
      await run.done;
      assert.ok(await eventually(() => pids.every((p) => !isLive(p)) && liveInGroups(groups).length === 0, 15_000), `left alive: ${pids.filter(isLive)}`);
    });
  }
});
