import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
  // Give the sampler thread time to start, then keep the main thread busy: only a worker can sample now.
  await sleep(1500);
  const busyUntil = Date.now() + 600;
  let step = 0;
  while (Date.now() < busyUntil) {
    const t0 = Date.now();
    while (Date.now() - t0 < 10);
    run.log({ loss: 1 }, { step: step++ });
  }
  const path = join(dir, "rank-0", "system.jsonl");
  const during = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
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
