import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { track } from "../../src/index.js";
import { chromiumPath, loadPage } from "./chromium.js";

const STEPS = 40;

/** Two ranks' runs of one experiment, written the way two processes would (RANK set per run). */
function makeExperiment(dir: string, finish: boolean): void {
  const saved = { RANK: process.env.RANK, WORLD_SIZE: process.env.WORLD_SIZE };
  try {
    for (const rank of [0, 1]) {
      Object.assign(process.env, { RANK: String(rank), WORLD_SIZE: "2" });
      const run = track.init({ id: "rep", dir, config: { lr: 0.01, rank, model: { width: 8 } }, systemMetrics: false });
      run.defineMetric("train/*", { stepMetric: "globalStep" });
      for (let s = 0; s < STEPS; s++) run.log({ "train/loss": 1 / (s + 1) + rank, globalStep: s * 4, lr: 0.01 }, { step: s });
      run.log({ "val/acc": 0.5 + rank / 10, note: `rank ${rank} <b>done</b>` });
      if (finish) run.finish();
      else (run as unknown as { finished: boolean }).finished = true;
    }
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  // System metrics as the sampler writes them, so that the System section has plots.
  for (const rank of [0, 1]) {
    const lines = [0, 1, 2].map((i) => JSON.stringify({ _time: 1000 + i * 2, step: i * 10, "system/rss_mb": 100 + i + rank, "system/cpu_percent": 50 }));
    writeFileSync(join(dir, `rank-${rank}`, "system.jsonl"), lines.join("\n") + "\n");
  }
}

function report(dir: string, out?: string) {
  return spawnSync(process.execPath, ["bin/ringtorch.js", "report", dir, ...(out ? ["--out", out] : [])], { encoding: "utf8", timeout: 60_000 });
}

const DRAWN = `(() => ({
  drawn: document.body.getAttribute("data-plots-drawn"),
  plots: [...document.querySelectorAll("figure.card")].map((f) => ({
    title: f.querySelector("figcaption").textContent,
    lines: [...f.querySelectorAll("path.line")].map((p) => (p.getAttribute("d").match(/[ML]/g) || []).length),
    dots: f.querySelectorAll("circle").length,
    legend: [...f.querySelectorAll(".legend span")].map((s) => s.textContent),
  })),
  text: document.body.innerText,
}))()`;

test("ringtorch report: usage errors are clear", () => {
  const none = report(join(tmpdir(), "no-such-experiment-dir-xyz"));
  assert.equal(none.status, 1);
  assert.match(none.stderr, /there is no folder .*no-such-experiment-dir-xyz/);
  const bad = spawnSync(process.execPath, ["bin/ringtorch.js", "repor"], { encoding: "utf8" });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command "repor"/);
});

test("the report renders in headless Chromium: every plot drew, no request, no console error", { skip: chromiumPath() ? false : "chromium is not installed" }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-report-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  makeExperiment(join(dir, "exp"), true);
  const r = report(join(dir, "exp"));
  assert.equal(r.status, 0, r.stderr);
  const html = join(dir, "exp", "report.html");
  const page = await loadPage(pathToFileURL(html).href, DRAWN, { screenshot: process.env.TRACK_SCREENSHOT !== undefined });
  if (page.screenshot) writeFileSync(process.env.TRACK_SCREENSHOT!, page.screenshot);
  assert.deepEqual(page.requests, [pathToFileURL(html).href], "the page loads nothing but itself");
  assert.deepEqual(page.consoleErrors, []);
  const v = page.value as { drawn: string; plots: { title: string; lines: number[]; dots: number; legend: string[] }[]; text: string };
  const titles = v.plots.map((p) => p.title);
  assert.deepEqual(titles, ["globalStep", "lr", "train/loss", "val/acc", "system/cpu_percent", "system/rss_mb"]);
  assert.equal(v.drawn, String(titles.length));
  for (const p of v.plots) {
    assert.deepEqual(p.legend, ["rank-0", "rank-1"], p.title);
    // One path per rank, with one vertex per logged point.
    const expected = p.title === "val/acc" ? [1, 1] : p.title.startsWith("system/") ? [3, 3] : [STEPS, STEPS];
    assert.deepEqual(p.lines, expected, p.title);
  }
  assert.equal(v.plots.find((p) => p.title === "val/acc")!.dots, 2);
  // Tables: summary and config side by side, text escaped (shown, not interpreted).
  assert.match(v.text, /rank 1 <b>done<\/b>/);
  assert.match(v.text, /model\.width\t8\t8/);
  assert.match(v.text, /finished/);

  // The checks themselves catch a page that reaches out or fails: the same page with an image URL and an error.
  const bad = join(dir, "bad.html");
  writeFileSync(bad, readFileSync(html, "utf8").replace("<body>", '<body><img src="http://127.0.0.1:9/x.png"><script>console.error("broken")</script>'));
  const badPage = await loadPage(pathToFileURL(bad).href, "1");
  assert.ok(badPage.requests.some((u) => u.startsWith("http://127.0.0.1:9/")));
  assert.ok(badPage.consoleErrors.some((e) => e.includes("broken")));
});

test("a report of runs still going (or killed) reads what they wrote so far", { skip: chromiumPath() ? false : "chromium is not installed" }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-report-live-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  makeExperiment(dir, false);
  // Half a record, as a writer caught mid-line leaves it.
  writeFileSync(join(dir, "rank-1", "metrics.jsonl"), readFileSync(join(dir, "rank-1", "metrics.jsonl"), "utf8") + '{"_step":41,"train/lo');
  const out = join(dir, "live.html");
  const r = report(dir, out);
  assert.equal(r.status, 0, r.stderr);
  const page = await loadPage(pathToFileURL(out).href, DRAWN);
  assert.deepEqual(page.consoleErrors, []);
  const v = page.value as { drawn: string; plots: { title: string; lines: number[] }[]; text: string };
  assert.equal(v.drawn, String(v.plots.length));
  assert.deepEqual(v.plots.find((p) => p.title === "train/loss")!.lines, [STEPS, STEPS]);
  // This process wrote them and is alive: they show as running; the summary comes from the records.
  assert.match(v.text, /running/);
  assert.match(v.text, /val\/acc\t0\.5\t0\.6/);
});
