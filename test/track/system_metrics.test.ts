import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { track } from "../../src/index.js";

test("system metrics are sampled off the training thread while it never yields", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-sys-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => track.init({ id: "x", dir, systemMetrics: { interval: 5 } as never }), /systemMetrics: unknown option "interval"; did you mean intervalMs\?/);
  const run = track.init({ id: "sys", dir, systemMetrics: { intervalMs: 20, samplesPerStep: 32 } });
  const path = join(dir, "rank-0", "system.jsonl");
  // Whole lines only: the sampler may be halfway through appending one.
  const samples = () => (existsSync(path) ? readFileSync(path, "utf8").split("\n").slice(0, -1).map((l) => JSON.parse(l)) : []);
  // Wait (with a deadline) for the sampler thread to be up: its first sample.
  for (const deadline = Date.now() + 60_000; samples().length === 0; await sleep(50)) {
    if (Date.now() > deadline) assert.fail("the sampler wrote nothing within 60 s");
  }
  // Now keep the main thread busy, never yielding, until a sample taken meanwhile shows up: only a worker can write it.
  let step = 0;
  for (const deadline = Date.now() + 60_000; !samples().some((s) => s.step > 0); ) {
    if (Date.now() > deadline) assert.fail("no sample was written while the training thread was busy");
    const t0 = Date.now();
    while (Date.now() - t0 < 10);
    run.log({ loss: 1 }, { step: step++ });
  }
  const during = samples();
  run.finish();
  const all = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.ok(during.some((s) => s.step > 0), "samples were written while the training thread was busy");
  assert.ok(all.length > during.length, "finish adds a last sample");
  for (const s of all) {
    assert.ok(s["system/rss_mb"] > 1 && s["system/rss_mb"] < 1e6);
    assert.ok(s["system/cpu_percent"] >= 0);
    if ("system/step_time_s" in s) {
      // Each step busy-waits 10 ms before it is logged, so no step can be shorter.
      assert.ok(s["system/step_time_s"] >= 0.0099, String(s["system/step_time_s"]));
      assert.ok(Math.abs(s["system/samples_per_s"] - 32 / s["system/step_time_s"]) < 1e-9);
    }
  }
  assert.ok(all.some((s) => "system/step_time_s" in s));
});
