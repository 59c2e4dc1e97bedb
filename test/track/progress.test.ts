import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { formatLine } from "../../src/track/progress_format.js";

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/track/tqdm_lines.json", import.meta.url), "utf8")) as {
  n: number;
  total: number | null;
  elapsed: number;
  desc: string;
  postfix: Record<string, unknown>;
  unit: string;
  ncols: number;
  line: string;
}[];

test("bar text matches tqdm's format_meter (fixtures from tools/gen_tqdm_fixtures.py)", () => {
  for (const c of fixtures) {
    const rate = c.elapsed > 0 ? c.n / c.elapsed : null;
    assert.equal(formatLine({ desc: c.desc, n: c.n, total: c.total, elapsed: c.elapsed, rate, unit: c.unit, postfix: c.postfix }, c.ncols), c.line);
  }
});

const script = "test/track/workers/progress_script.ts";
const node = (env: NodeJS.ProcessEnv = {}) => `LINE_INTERVAL=${env.LINE_INTERVAL ?? 5} LOCAL_RANK=${env.LOCAL_RANK ?? 0} ${process.execPath} --import tsx ${script}`;

test("under a pseudo-terminal the bar redraws in place and write() prints above it", () => {
  const r = spawnSync("script", ["-qfc", node(), "/dev/null"], { encoding: "utf8", timeout: 60_000, env: { ...process.env, COLUMNS: "100" } });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout.replace(/\r\n/g, "\n");
  // Lines (split on newlines): the message, the finished bar, then "after"; everything else is \r redraws.
  const lines = out.split("\n").filter((l) => l.length > 0);
  assert.equal(lines.length, 3, JSON.stringify(out));
  assert.match(lines[0], /\r\x1b\[Khalfway there$/);
  assert.ok(lines[0].includes("demo:   0%|"), "the bar was drawn before the message");
  const redraws = lines[1].split("\r").filter(Boolean).map((s) => s.replace(/\x1b\[K/g, ""));
  assert.ok(redraws.length >= 2, "the bar is redrawn after the message and at the end");
  assert.match(redraws.at(-1)!, /^demo: 100%\|█+\| 30\/30 \[00:0\d<00:00, +[\d.]+it\/s, loss=0\.0333\]$/);
  assert.equal(lines[2], "after");
});

test("piped, it prints whole lines (no carriage returns): one at the start, one at the end", () => {
  const r = spawnSync("sh", ["-c", `${node()} 2>&1 | cat`], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!r.stdout.includes("\r"));
  const lines = r.stdout.trimEnd().split("\n");
  assert.deepEqual(lines.map((l) => l.replace(/\[.*\]$/, "")), ["demo:   0%|" + " ".repeat(lines[0].indexOf("| 0/30") - 11) + "| 0/30 ", "halfway there", lines[2].replace(/\[.*\]$/, ""), "after"]);
  assert.match(lines[2], /^demo: 100%\|█+\| 30\/30 \[/);
  // With a short interval it also prints progress lines between, each a whole line.
  const often = spawnSync("sh", ["-c", `${node({ LINE_INTERVAL: "0.02" })} 2>&1 | cat`], { encoding: "utf8", timeout: 60_000 });
  const progressLines = often.stdout.trimEnd().split("\n").filter((l) => l.startsWith("demo:"));
  assert.ok(progressLines.length > 2, often.stdout);
  const counts = progressLines.map((l) => Number(/\| (\d+)\/30 /.exec(l)![1]));
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), "counts only go up");
});

test("only local rank 0 shows a bar by default; write() still prints", () => {
  const r = spawnSync("sh", ["-c", `${node({ LOCAL_RANK: "1" })} 2>&1 | cat`], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "halfway there\nafter\n");
});
