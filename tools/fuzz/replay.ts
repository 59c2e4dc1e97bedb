// npx tsx tools/fuzz/replay.ts /tmp/fuzz.json [--verbose] [--op NAME]
// Replays a batch of fuzz cases (from tools/fuzz/gen_cases.py) and prints the failing classes:
// op and kind of difference, the count, and one example each (--verbose lists every failing case).
import { readFileSync } from "node:fs";
import { describeCase, documentedDifference, replayCase, type FuzzCase } from "./replay_case.js";

const argv = process.argv.slice(2);
const file = argv.find((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: npx tsx tools/fuzz/replay.ts CASES.json [--verbose] [--op NAME]");
  process.exit(2);
}
const verbose = argv.includes("--verbose");
const opIdx = argv.indexOf("--op");
const only = opIdx >= 0 ? argv[opIdx + 1] : null;
const { cases } = JSON.parse(readFileSync(file, "utf8")) as { cases: FuzzCase[] };
const classes = new Map<string, { count: number; example: string }>();
let failed = 0;
let replayed = 0;
const documented = new Map<string, number>();
for (const c of cases) {
  if (only && c.op !== only) continue;
  replayed++;
  const reason = documentedDifference(c);
  if (reason) documented.set(reason, (documented.get(reason) ?? 0) + 1);
  const d = replayCase(c);
  if (!d) continue;
  failed++;
  const key = `${c.op}: ${d.kind}`;
  const line = `${describeCase(c)}  seed=${c.seed}  ${d.detail}`;
  if (verbose) console.log(`${key}  ${line}`);
  const cls = classes.get(key);
  if (cls) cls.count++;
  else classes.set(key, { count: 1, example: line });
}
for (const [key, { count, example }] of [...classes].sort((a, b) => b[1].count - a[1].count)) {
  console.log(`${String(count).padStart(5)}  ${key}\n       e.g. ${example}`);
}
for (const [reason, count] of documented) console.log(`${String(count).padStart(5)}  documented difference, not compared: ${reason}`);
console.log(`${failed} of ${replayed} cases differ from PyTorch (${classes.size} classes)`);
process.exitCode = failed > 0 ? 1 : 0;
