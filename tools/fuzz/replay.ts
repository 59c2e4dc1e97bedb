// npx tsx tools/fuzz/replay.ts /tmp/fuzz.json [--verbose] [--op NAME]
// Replays a batch of fuzz cases (from tools/fuzz/gen_cases.py) and prints the failing classes:
// op and kind of difference, the count, and one example each (--verbose lists every failing case).
// Cases run in child processes, so an input that aborts the process is reported as a "crash" class
// (the case that was running) and the rest of the batch still runs.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describeCase, documentedDifference, replayCase, type FuzzCase } from "./replay_case.js";

const CHUNK = 2500;
const argv = process.argv.slice(2);
const file = argv.find((a, i) => !a.startsWith("--") && argv[i - 1] !== "--op" && argv[i - 1] !== "--child");
if (!file) {
  console.error("usage: npx tsx tools/fuzz/replay.ts CASES.json [--verbose] [--op NAME]");
  process.exit(2);
}
const flag = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : null;
};
const { cases } = JSON.parse(readFileSync(file, "utf8")) as { cases: FuzzCase[] };

/** One line per case: its index, then "ok", "doc <reason>" or "diff <key>\t<example>". */
function runChild(range: string): void {
  const [from, to] = range.split(":").map(Number);
  for (let i = from; i < to; i++) {
    const c = cases[i];
    const reason = documentedDifference(c);
    let line = reason ? `doc ${reason}` : "ok";
    if (!reason) {
      const d = replayCase(c);
      if (d) line = `diff ${c.op}: ${d.kind}\t${describeCase(c)}  seed=${c.seed}  ${d.detail.replace(/\s+/g, " ")}`;
    }
    process.stdout.write(`${i} ${line}\n`);
  }
}

const child = flag("--child");
if (child) {
  runChild(child);
} else {
  const only = flag("--op");
  const verbose = argv.includes("--verbose");
  const classes = new Map<string, { count: number; example: string }>();
  const documented = new Map<string, number>();
  let failed = 0;
  let replayed = 0;
  const note = (key: string, example: string) => {
    failed++;
    if (verbose) console.log(`${key}  ${example}`);
    const cls = classes.get(key);
    if (cls) cls.count++;
    else classes.set(key, { count: 1, example });
  };
  const self = fileURLToPath(import.meta.url);
  let next = 0;
  while (next < cases.length) {
    const end = Math.min(next + CHUNK, cases.length);
    const r = spawnSync(process.execPath, ["--import", "tsx", self, file, "--child", `${next}:${end}`], { encoding: "utf8", maxBuffer: 1 << 28 });
    let last = next - 1;
    for (const line of r.stdout.split("\n")) {
      const m = /^(\d+) (ok|doc|diff)(?: (.*))?$/.exec(line);
      if (!m) continue;
      const i = Number(m[1]);
      last = i;
      if (only && cases[i].op !== only) continue;
      replayed++;
      if (m[2] === "doc") documented.set(m[3], (documented.get(m[3]) ?? 0) + 1);
      else if (m[2] === "diff") {
        const [key, example] = m[3].split("\t");
        note(key, example);
      }
    }
    if (last < end - 1) {
      // The child died inside case last + 1: that input aborts the process.
      const c = cases[last + 1];
      replayed++;
      note(`${c.op}: crash`, `${describeCase(c)}  seed=${c.seed}  the process died (${r.signal ?? `exit ${r.status}`}): ${(r.stderr ?? "").trim().split("\n").slice(-2).join(" ")}`);
      next = last + 2;
    } else next = end;
  }
  for (const [key, { count, example }] of [...classes].sort((a, b) => b[1].count - a[1].count)) {
    console.log(`${String(count).padStart(5)}  ${key}\n       e.g. ${example}`);
  }
  for (const [reason, count] of documented) console.log(`${String(count).padStart(5)}  documented difference, not compared: ${reason}`);
  console.log(`${failed} of ${replayed} cases differ from PyTorch (${classes.size} classes)`);
  process.exitCode = failed > 0 ? 1 : 0;
}
