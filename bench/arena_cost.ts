// node --import tsx --conditions=source bench/arena_cost.ts [--bytes 4096,65536] [--calls 200000] [--rounds 5]
//
// What one output's buffer costs V8, each way the arena could make it (native/pool/arena_cost.cc
// times the loop in C++, by process CPU time, so no JavaScript call is counted and the collections
// the garbage sets off are). Each case runs in a fresh process, cases alternated round by round: a
// case that leaves V8 mid-marking (the external ArrayBuffer's reported bytes start incremental
// markings) would slow the ones after it in the same process. Beside them, a Float32Array made in
// JavaScript over an existing SharedArrayBuffer. Ranges over the rounds; the machine may be shared.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadAddon, nativeUnavailableReason } from "../src/backend/index.js";
import { secondsOn } from "./clock.js";
import { median, printTable } from "./table.js";
import { childNodeFlags } from "../src/launch/young_generation.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const CASES = [
  "napi_create_external_arraybuffer",
  "new store + SharedArrayBuffer (arena before)",
  "SharedArrayBuffer over a kept store (arena now)",
  "new store alone",
  "kept store's SharedArrayBuffer + Float32Array (C++)",
  "Float32Array over a slab + weak handle (C++)",
  "empty N-API call",
];

type CostBench = (calls: number, bytes: number, only?: number) => Float64Array;

/** One case in this process (the child's side): prints ns per output. */
function child(caseIndex: number, calls: number, bytes: number): void {
  const addon = loadAddon() as unknown as { arenaCostBench?: CostBench } | null;
  if (!addon?.arenaCostBench) throw new Error(`arena_cost: the native addon has no arenaCostBench (${nativeUnavailableReason() ?? "rebuild with npm run build:native"})`);
  if (caseIndex === CASES.length) {
    const sab = new SharedArrayBuffer(bytes);
    const cpuSeconds = secondsOn("cpu");
    let views = 0;
    const t0 = cpuSeconds();
    for (let i = 0; i < calls; i++) views += new Float32Array(sab, 0, bytes / 4).length; // used, so not optimized away
    const ns = ((cpuSeconds() - t0) * 1e9) / calls;
    if (views !== calls * (bytes / 4)) throw new Error("arena_cost: a view had the wrong length");
    console.log(ns.toFixed(1));
    return;
  }
  addon.arenaCostBench(calls / 10, bytes, caseIndex);  // warm-up
  console.log(addon.arenaCostBench(calls, bytes, caseIndex)[caseIndex].toFixed(1));
}

function main(): void {
  const sizes = option("--bytes", "4096,65536").split(",").map(Number);
  const calls = Number(option("--calls", "200000"));
  const rounds = Number(option("--rounds", "5"));
  const names = [...CASES, "Float32Array over a SharedArrayBuffer (JavaScript)"];
  const self = fileURLToPath(import.meta.url);
  const rows: (string | number)[][] = [];
  for (const bytes of sizes) {
    const ns: number[][] = names.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let c = 0; c < names.length; c++) {
        const out = spawnSync(process.execPath, [...childNodeFlags(process.execArgv, process.env), ...process.execArgv, self, "--child", String(c), String(calls), String(bytes)], { encoding: "utf8", timeout: 120_000 });
        if (out.status !== 0) throw new Error(`arena_cost: case ${c} at ${bytes} B failed: ${(out.stderr || out.error?.message || "").trim().split("\n").pop()}`);
        ns[c].push(Number(out.stdout.trim()));
      }
    }
    names.forEach((name, c) => rows.push([String(bytes), name, median(ns[c]), Math.min(...ns[c]), Math.max(...ns[c])]));
  }
  console.log(`ns of process CPU time per output, ${calls} outputs per run, median of ${rounds} runs (each in its own process)`);
  printTable(["bytes", "how the output's buffer is made", "ns median", "min", "max"], rows);
}

if (args[0] === "--child") child(Number(args[1]), Number(args[2]), Number(args[3]));
else main();
