import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import * as rt from "../../src/index.js";
import { tracing } from "../../src/util/trace.js";
import { parseArgs, UsageError } from "../../src/launch/cli_options.js";
import { resolveConfig } from "../../src/launch/launch_config.js";
import { checkTraceEvents, parseTraceArray, type TraceEvent } from "./trace_format.js";

const WORKER = "test/track/workers/trace_ddp.ts";
const SKEW_US = 250_000;
/** Parameters of the worker's MLP 32-256-256-8, in bytes of float32: what every step's buckets reduce in all. */
const PARAM_BYTES = 4 * (32 * 256 + 256 + 256 * 256 + 256 + 256 * 8 + 8);

const end = (e: TraceEvent) => e.ts + e.dur;
const within = (inner: TraceEvent, outer: TraceEvent) => inner.ts >= outer.ts && end(inner) <= end(outer);
const overlaps = (a: TraceEvent, b: TraceEvent, slackUs = 0) => a.ts <= end(b) + slackUs && b.ts <= end(a) + slackUs;

test("ringrun --trace: 2-rank DDP timeline, one process per rank, buckets overlapping backward, clocks aligned", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-trace-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, SKEW_US: String(SKEW_US), CKPT_DIR: join(dir, "ckpt"), RINGTORCH_QUIET: "1" };
  for (const k of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_RUN_ID", "RINGTORCH_TRACE"]) delete env[k];
  const traceDir = join(dir, "trace");
  const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "--trace", traceDir, WORKER], { env, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, `ringrun failed:\n${r.stdout}\n${r.stderr}`);
  assert.deepEqual(readdirSync(traceDir).sort(), ["rank-0.json", "rank-1.json", "trace.json"]);

  // The merged file is complete JSON; each rank's own file was closed at exit.
  const events = checkTraceEvents(JSON.parse(readFileSync(join(traceDir, "trace.json"), "utf8")));
  for (const rank of [0, 1]) {
    const text = readFileSync(join(traceDir, `rank-${rank}.json`), "utf8");
    assert.equal(text.trimEnd().at(-1), "]", `rank ${rank}'s file is closed`);
    assert.equal(checkTraceEvents(parseTraceArray(text)).length, events.filter((e) => e.pid === rank).length, "the merge keeps every event");
  }

  for (const rank of [0, 1]) {
    const mine = events.filter((e) => e.pid === rank);
    const meta = (name: string, tid: number) => mine.find((e) => e.ph === "M" && e.name === name && e.tid === tid)?.args?.name;
    assert.equal(meta("process_name", 0), `rank ${rank}`);
    assert.equal(meta("thread_name", 1), "training");
    assert.equal(meta("thread_name", 2), "comm");
    const train = mine.filter((e) => e.tid === 1 && e.ph === "X");
    const count = (name: string) => train.filter((e) => e.name === name).length;
    // 64 samples in batches of 16: four steps, each read, run forward, backward and stepped, then one save.
    assert.deepEqual(
      ["DataLoader.next", "DistributedDataParallel.forward", "backward", "SGD.step", "checkpoint.save"].map(count),
      [4, 4, 4, 4, 1],
      `rank ${rank}'s training thread: ${[...new Set(train.map((e) => e.name))].join(", ")}`,
    );

    const comm = mine.filter((e) => e.tid === 2 && e.ph === "X");
    const buckets = comm.filter((e) => e.name.startsWith("DDP bucket "));
    const reduces = comm.filter((e) => e.name === "allReduce" && e.args?.reduceOp === "avg");
    assert.ok(buckets.length >= 8, `at least two buckets per step, got ${buckets.length} bucket spans`);
    for (const b of buckets) {
      // Each bucket's span holds its all-reduce, which names op, bytes, algorithm and sequence number.
      const inner = reduces.filter((a) => within(a, b));
      assert.equal(inner.length, 1, `one all-reduce inside ${JSON.stringify(b)}`);
      const args = inner[0].args!;
      assert.equal(args.op, "allReduce");
      assert.equal(args.bytes, b.args!.bytes);
      assert.ok(["ring", "rhd", "tree"].includes(args.algorithm as string), `algorithm ${args.algorithm}`);
      assert.ok(Number.isInteger(args.seq) && (args.seq as number) > 0, `seq ${args.seq}`);
    }
    const bucketBytes = buckets.reduce((s, b) => s + (b.args!.bytes as number), 0);
    assert.equal(bucketBytes, 4 * PARAM_BYTES, "the buckets of the four steps reduce every parameter's gradient once per step");

    // Overlap: each step's first bucket was handed to the comm thread while backward was still
    // computing (before DDP's wait at its end), and its all-reduce ran during that backward.
    const backwards = train.filter((e) => e.name === "backward");
    const finals = train.filter((e) => e.name.startsWith("DDP finalize"));
    const ready = mine.filter((e) => e.ph === "i" && e.name === "DDP bucket 0 ready");
    assert.equal(ready.length, 4);
    backwards.forEach((bw, step) => {
      const fin = finals.find((f) => within(f, bw))!;
      assert.ok(ready[step].ts >= bw.ts && ready[step].ts < fin.ts, `step ${step}: bucket 0 handed over during backward's computation`);
      const first = reduces.find((a) => overlaps(a, bw) && a.ts >= ready[step].ts);
      assert.ok(first, `step ${step}: a bucket all-reduce on the comm thread overlaps backward`);
    });
  }

  // Clocks: rank 1's was 250 ms off; alignment must leave less than 1 ms of it.
  const residuals = new Map([...r.stdout.matchAll(/RESIDUAL (\d) (\S+)/g)].map((m) => [Number(m[1]), Number(m[2])]));
  assert.ok(Math.abs(residuals.get(0)!) < 1, "rank 0's clock is the reference");
  assert.ok(Math.abs(residuals.get(1)!) < 1000, `rank 1's aligned clock is ${residuals.get(1)} µs off the true one`);
  // And in the trace itself: both ranks take part in each all-reduce at once, so the same
  // collective's spans on the two ranks overlap in time (250 ms apart without the alignment).
  const bySeq = (rank: number) => new Map(events.filter((e) => e.pid === rank && e.name === "allReduce").map((e) => [e.args!.seq, e]));
  const [s0, s1] = [bySeq(0), bySeq(1)];
  assert.ok(s0.size >= 8);
  for (const [seq, a] of s0) assert.ok(overlaps(a, s1.get(seq)!, 1000), `all-reduce ${seq}: ${JSON.stringify([a, s1.get(seq)])}`);

  // A rank killed mid-write leaves no closing bracket and perhaps half a line: every whole event is still read.
  const full = readFileSync(join(traceDir, "rank-0.json"), "utf8");
  const cut = full.slice(0, full.lastIndexOf("\n]")).replace(/\}\s*$/, "");
  writeFileSync(join(dir, "cut.json"), cut.slice(0, cut.length - 10));
  const recovered = rt.track.readTraceEvents(join(dir, "cut.json"));
  assert.deepEqual(recovered, parseTraceArray(full).slice(0, -1));
});

test("ringrun --trace merges what the ranks wrote when one of them failed", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-trace-fail-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, FAIL_RANK: "1", CKPT_DIR: join(dir, "ckpt"), RINGTORCH_QUIET: "1" };
  for (const k of ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGTORCH_STORE_TOKEN", "RINGTORCH_RUN_ID", "RINGTORCH_TRACE"]) delete env[k];
  const traceDir = join(dir, "trace");
  const r = spawnSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", "2", "--trace", traceDir, WORKER], { env, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 1, `the job fails:\n${r.stderr}`);
  const events = checkTraceEvents(JSON.parse(readFileSync(join(traceDir, "trace.json"), "utf8")));
  // The failed rank wrote its file on the way out: its two steps are there.
  const failed = events.filter((e) => e.pid === 1 && e.ph === "X");
  assert.equal(failed.filter((e) => e.name === "backward").length, 2);
  assert.equal(failed.filter((e) => e.name === "SGD.step").length, 2);
});

test("startTrace/stopTrace in one process; with tracing off nothing is recorded or written", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "track-trace-1-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const model = new rt.nn.Sequential(new rt.nn.Linear(4, 8), new rt.nn.ReLU(), new rt.nn.Linear(8, 1));
  const opt = new rt.optim.Adam(model.parameters(), { lr: 1e-2 });
  const loader = new rt.data.DataLoader(new rt.data.TensorDataset(rt.randn([8, 4]), rt.randn([8, 1])), { batchSize: 4 });
  const epoch = () => {
    for (const [x, y] of loader) {
      opt.zeroGrad();
      rt.mseLoss(model.call(x), y).backward();
      opt.step();
    }
  };
  epoch();
  assert.equal(tracing.on, false);
  assert.equal(rt.track.traceInfo(), null);
  assert.deepEqual(readdirSync(dir), [], "tracing off writes nothing");

  const info = rt.track.startTrace(join(dir, "t"));
  assert.equal(info.file, join(dir, "t", "rank-0.json"));
  assert.equal(info.merged, null, "no merged file without ringrun");
  epoch();
  assert.equal(rt.track.stopTrace(), info.file);
  const written = readFileSync(info.file, "utf8");
  const events = checkTraceEvents(JSON.parse(written));
  const names = events.filter((e) => e.ph === "X").map((e) => e.name);
  assert.deepEqual(names, ["DataLoader.next", "Sequential.forward", "backward", "Adam.step", "DataLoader.next", "Sequential.forward", "backward", "Adam.step"]);
  // Spans of one thread nest or follow one another, in time order.
  const spans = events.filter((e) => e.ph === "X");
  for (let i = 1; i < spans.length; i++) assert.ok(spans[i].ts >= end(spans[i - 1]), `${spans[i].name} starts after ${spans[i - 1].name} ends`);

  epoch();
  assert.equal(tracing.on, false);
  assert.equal(readFileSync(info.file, "utf8"), written, "nothing is recorded after stopTrace");
  assert.deepEqual(readdirSync(join(dir, "t")), ["rank-0.json"]);
});

test("ringrun's --trace (or RINGTORCH_TRACE) names the folder, resolved against the working directory", () => {
  const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => resolveConfig(parseArgs([...argv, WORKER]), env, process.cwd());
  assert.equal(config([]).traceDir, undefined, "off unless asked for");
  assert.equal(config(["--trace", "out/t"]).traceDir, join(process.cwd(), "out/t"));
  assert.equal(config([], { RINGTORCH_TRACE: "/tmp/x" }).traceDir, "/tmp/x");
  assert.equal(config(["--trace=/a"], { RINGTORCH_TRACE: "/tmp/x" }).traceDir, "/a", "the flag wins");
  assert.throws(() => config(["--trace", ""]), (e: Error) => e instanceof UsageError && /--trace expects the folder/.test(e.message));
});
