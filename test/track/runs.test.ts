import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readdirSync } from "node:fs";
import { checkpoint, track } from "../../src/index.js";
import { readEvents } from "./event_reader.js";

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "track-runs-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** metrics.jsonl parsed line by line here (not with src's reader): every line must be a whole record. */
function records(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, "utf8");
  assert.ok(text.endsWith("\n"), `${path} ends in a torn line`);
  return text.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
}

const quiet = { systemMetrics: false as const };

test("log: steps count up by default, may repeat, and never go back", (t) => {
  const dir = tempDir(t);
  const run = track.init({ id: "steps", dir, config: { lr: 0.1 }, ...quiet });
  assert.equal(run.id, "steps-0");
  assert.equal(run.name, "rank-0");
  assert.equal(run.group, "steps");
  run.log({ a: 1 });
  run.log({ a: 2 });
  run.log({ b: 5 }, { step: 1 });
  run.log({ a: 3, ok: true, tag: "x" }, { step: 10 });
  assert.throws(() => run.log({ a: 4 }, { step: 9 }), /step 9 is lower than the last step logged \(10\)/);
  assert.throws(() => run.log({ _step: 1 }), /reserved/);
  assert.throws(() => run.log({ a: [1] as unknown as number }), /metric "a" must be a number, boolean or string, got object/);
  assert.throws(() => run.log({ a: 1 }, { steps: 3 } as never), /unknown option "steps"; did you mean step\?/);
  run.finish();
  assert.throws(() => run.log({ a: 1 }), /has finished/);
  const rows = records(join(dir, "rank-0", "metrics.jsonl"));
  assert.deepEqual(rows.map((r) => r._step), [0, 1, 1, 10]);
  assert.deepEqual(rows.map((r) => [r.a, r.b, r.ok, r.tag]), [[1, undefined, undefined, undefined], [2, undefined, undefined, undefined], [undefined, 5, undefined, undefined], [3, undefined, 1, "x"]]);
  const info = JSON.parse(readFileSync(join(dir, "rank-0", "run.json"), "utf8"));
  assert.equal(info.id, "steps-0");
  assert.deepEqual(info.config, { lr: 0.1 });
  assert.ok(info.finishedAt);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "rank-0", "summary.json"), "utf8")).a, 3);
});

test("resume: never on an existing run, must on a missing one, a different run in the folder, are errors", (t) => {
  const dir = tempDir(t);
  assert.throws(() => track.init({ id: "r", dir, resume: "must", ...quiet }), /resume "must" but run "r-0" does not exist/);
  assert.throws(() => track.init({ dir, resume: "must", ...quiet }), /needs the id/);
  assert.throws(() => track.init({ id: "r", dir, resume: "sometimes" as never, ...quiet }), /resume must be "allow", "must" or "never"/);
  assert.throws(() => track.init({ id: "r", dir, resum: "allow" } as never), /unknown option "resum"; did you mean resume\?/);
  track.init({ id: "r", dir, ...quiet }).finish();
  assert.throws(() => track.init({ id: "r", dir, ...quiet }), /run "r-0" already exists .*resume: "allow"/);
  assert.throws(() => track.init({ id: "other", dir, resume: "allow", ...quiet }), /holds run "r-0", not "other-0"/);
  const again = track.init({ id: "r", dir, resume: "must", ...quiet });
  assert.equal(again.resumed, true);
  assert.throws(() => track.init({ id: "x", dir: join(dir, "x"), ...quiet }), /run r-0 is still going/);
  again.finish();
});

test("a resumed run continues its step, summary and runtime; a torn last line is dropped", (t) => {
  const dir = tempDir(t);
  const a = track.init({ id: "c", dir, ...quiet });
  a.defineMetric("loss", { summary: "min" });
  for (const [i, v] of [3, 1, 2].entries()) a.log({ loss: v }, { step: i });
  // No finish: as after a SIGKILL, with half a record written.
  const path = join(dir, "rank-0", "metrics.jsonl");
  appendFileSync(path, '{"_step":3,"_ti');
  assert.deepEqual(track.readJsonl(path).map((l) => l.value._step), [0, 1, 2]);
  (a as unknown as { finished: boolean }).finished = true;
  const b = track.init({ id: "c", dir, resume: "allow", ...quiet });
  assert.equal(b.step, 2);
  assert.equal(b.summary.loss, 1);
  b.log({ loss: 0.5 });
  b.finish();
  assert.deepEqual(records(path).map((r) => [r._step, r.loss]), [[0, 3], [1, 1], [2, 2], [3, 0.5]]);
  const info = JSON.parse(readFileSync(join(dir, "rank-0", "run.json"), "utf8"));
  assert.equal(info.resumes.length, 1);
  assert.equal(info.resumes[0].fromStep, 2);
  assert.deepEqual(info.defines, [{ name: "loss", summary: "min" }]);
});

test("resumeFrom drops what was logged after the checkpoint's step, in the JSONL and the event file", (t) => {
  const dir = tempDir(t);
  const a = track.init({ id: "w", dir, ...quiet });
  for (let s = 0; s < 8; s++) a.log({ loss: s }, { step: s });
  a.finish();
  const b = track.init({ id: "w", dir, resume: "allow", resumeFrom: 4, ...quiet });
  assert.equal(b.step, 4);
  for (let s = 5; s < 7; s++) b.log({ loss: 10 + s }, { step: s });
  b.finish();
  assert.deepEqual(records(join(dir, "rank-0", "metrics.jsonl")).map((r) => [r._step, r.loss]), [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 15], [6, 16]]);
  const rankDir = join(dir, "rank-0");
  const events = readEvents(join(rankDir, readdirSync(rankDir).find((f) => f.includes("tfevents"))!));
  const loss = events.flatMap((e) => (e.values ?? []).filter((v) => v.tag === "loss").map((v) => [e.step, v.simpleValue]));
  assert.deepEqual(loss, [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 15], [6, 16]]);
});

test("the run id goes into checkpoint.save and comes back from checkpoint.resume", async (t) => {
  const dir = tempDir(t);
  const run = track.init({ id: "ck", dir: join(dir, "runs"), ...quiet });
  await checkpoint.save(join(dir, "ckpt"), { epoch: 1 }, { step: 3 });
  run.finish();
  const start = await checkpoint.resume(join(dir, "ckpt"));
  assert.equal(start.runId, "ck");
  assert.equal(start.step, 3);
  assert.equal((await checkpoint.resume(join(dir, "nothing"))).runId, undefined);
});

test('mode "rank0": other ranks get a disabled run that writes nothing', (t) => {
  const dir = tempDir(t);
  const saved = { RANK: process.env.RANK, WORLD_SIZE: process.env.WORLD_SIZE };
  Object.assign(process.env, { RANK: "1", WORLD_SIZE: "2" });
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  });
  assert.throws(() => track.init({ dir, ...quiet }), /pass an id when ranks are started without ringrun/);
  const run = track.init({ id: "m", dir, mode: "rank0", ...quiet });
  assert.equal(run.disabled, true);
  run.log({ a: 1 });
  assert.throws(() => run.log({ a: 1 }, { step: -1 }), /non-negative/);
  run.finish();
  assert.equal(existsSync(dir) && existsSync(join(dir, "rank-1")), false);
  const all = track.init({ id: "m2", dir, ...quiet });
  assert.equal(all.id, "m2-1");
  assert.equal(all.dir, join(dir, "rank-1"));
  all.finish();
});

test("SIGKILL while logging leaves only whole records (at most a torn last line, which readers skip)", async (t) => {
  const dir = tempDir(t);
  const script = `
    import { track } from ${JSON.stringify(new URL("../../src/index.ts", import.meta.url).href)};
    const run = track.init({ id: "k", dir: ${JSON.stringify(dir)}, systemMetrics: false });
    let i = 0;
    for (;;) { run.log({ loss: i, text: "x".repeat(i % 300) }, { step: i }); i++; if (i === 200) process.stdout.write("go\\n"); }
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  child.kill("SIGKILL");
  await new Promise((resolve) => child.on("close", resolve));
  const lines = track.readJsonl<{ _step: number; loss: number }>(join(dir, "rank-0", "metrics.jsonl"));
  assert.ok(lines.length >= 200);
  lines.forEach((l, i) => assert.deepEqual([l.value._step, l.value.loss], [i, i]));
  const resumed = track.init({ id: "k", dir, resume: "must", ...quiet });
  assert.equal(resumed.step, lines.length - 1);
  resumed.log({ loss: -1 });
  resumed.finish();
  const after = records(join(dir, "rank-0", "metrics.jsonl"));
  assert.deepEqual(after.map((r) => r._step), [...lines.map((_, i) => i), lines.length]);
});
