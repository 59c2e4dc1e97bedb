import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { explain, launch } from "./harness.js";
import { checkTraceEvents, parseTraceArray, type TraceEvent } from "../track/trace_format.js";

/**
 * PyTorch's orders for 2 stages and 4 micro-batches, written out by hand from its schedules
 * (torch.distributed.pipelining): GPipe runs every forward, then every backward; Schedule1F1B
 * warms up with min(m, stages - s) forwards on stage s, then alternates one backward and one
 * forward, then drains the remaining backwards.
 */
const EXPECTED: Record<string, string[]> = {
  Schedule1F1B: ["F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"],
  ScheduleGPipe: ["F0 F1 F2 F3 B0 B1 B2 B3", "F0 F1 F2 F3 B0 B1 B2 B3"],
};

const end = (e: TraceEvent) => e.ts + e.dur;
const inside = (e: TraceEvent, outer: TraceEvent) => e.ts >= outer.ts && end(e) <= end(outer);

test("a traced 2-stage pipeline: each stage's forward/backward per micro-batch in the schedule's order, its waits, and its sends/receives on the comm thread", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "pipeline-trace-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const results = await launch({ world: 2, script: "pipeline_trace.ts", env: { TRACE_DIR: dir }, timeoutMs: 120_000 });
  for (const r of results) assert.equal(r.code, 0, explain(results));

  for (const rank of [0, 1]) {
    const events = checkTraceEvents(parseTraceArray(readFileSync(join(dir, `rank-${rank}.json`), "utf8")));
    const spans = events.filter((e) => e.ph === "X");
    const train = spans.filter((e) => e.tid === 1);
    const comm = spans.filter((e) => e.tid === 2);
    const allSteps = train.filter((e) => e.name.endsWith(".step")).sort((a, b) => a.ts - b.ts);
    for (const [schedule, orders] of Object.entries(EXPECTED)) {
      const steps = train.filter((e) => e.name === `${schedule}.step`);
      assert.equal(steps.length, 1, `rank ${rank}: one ${schedule}.step span`);
      const step = steps[0]!;
      assert.equal(step.args?.microbatches, 4);
      assert.ok(typeof step.args?.bubbleFraction === "number");

      const actions = train.filter((e) => inside(e, step) && /^(forward|backward) mb \d$/.test(e.name)).sort((a, b) => a.ts - b.ts);
      const order = actions.map((e) => `${e.name[0]!.toUpperCase()}${e.args?.mb}`).join(" ");
      assert.equal(order, orders[rank], `rank ${rank}'s ${schedule} actions`);
      for (const a of actions) {
        assert.equal(a.args?.stage, rank);
        assert.equal(a.name.endsWith(`mb ${a.args?.mb}`), true);
      }

      // The waits for a peer's message sit inside the action that needed it: stage 1 waits for each
      // activation in its forward, stage 0 for each gradient in its backward.
      const waitName = rank === 0 ? "wait gradient" : "wait activation";
      const waits = train.filter((e) => inside(e, step) && e.name.startsWith(waitName));
      assert.deepEqual(waits.map((w) => w.args?.mb).sort(), [0, 1, 2, 3], `rank ${rank}'s ${waitName} spans`);
      for (const w of waits) {
        const owner = actions.find((a) => inside(w, a));
        assert.ok(owner, `${w.name} lies inside an action`);
        assert.equal(owner.name, `${rank === 0 ? "backward" : "forward"} mb ${w.args?.mb}`);
      }

      // Stage 1 sends its input's gradient before it computes its weight gradients (inputGradientFirst):
      // each backward ends with their span; stage 0 sends none and computes them inside its pass.
      const weightSpans = train.filter((e) => inside(e, step) && e.name.startsWith("weight gradients"));
      assert.deepEqual(weightSpans.map((w) => w.args?.mb).sort(), rank === 1 ? [0, 1, 2, 3] : [], `rank ${rank}'s weight gradient spans`);
      for (const w of weightSpans) assert.equal(actions.find((a) => inside(w, a))?.name, `backward mb ${w.args?.mb}`);

      // On the comm thread: stage 0 sends each micro-batch's activation and receives its gradient;
      // stage 1 the other way round, all across boundary 0, in micro-batch order. An activation's
      // shape travels in its own message (a header) only in the first step, when the receiver
      // cannot yet know its size; later steps send the activation alone, its shape inside it. A
      // receive may be posted before its step's span opens and a send may finish after it closes,
      // so the spans are not cut by time: each name has 4 spans per step, in step order, and the
      // k-th step owns the k-th four.
      const k = allSteps.indexOf(step);
      const named = (name: string) => comm.filter((e) => e.name === name).sort((a, b) => a.ts - b.ts);
      const [sent, received] = rank === 0 ? [["send header", "send activation"], ["recv gradient"]] : [["send gradient"], ["recv header", "recv activation"]];
      for (const name of [...sent, ...received]) {
        const header = name.endsWith("header");
        assert.equal(named(name).length, header ? 4 : 4 * allSteps.length, `rank ${rank}: ${name} spans, ${header ? "4 in the first step" : "4 per step"}`);
        if (header && k > 0) continue;
        const list = named(name).slice(4 * k, 4 * k + 4);
        assert.deepEqual(list.map((e) => e.args?.mb), [0, 1, 2, 3], `rank ${rank} ${schedule}: ${name} spans by micro-batch`);
        for (const e of list) {
          assert.equal(e.args?.boundary, 0);
          assert.equal(e.args?.peer, 1 - rank);
          assert.ok((e.args?.bytes as number) > 0);
        }
      }
    }
    // The comm spans of one thread never overlap (Perfetto nests spans of a thread). Times are
    // epoch microseconds (~1.8e15) in doubles, so ts and ts + dur carry a quarter-µs step each once
    // the clock offset is added: a span that starts where the last one ended may read up to ~0.5 µs
    // before it.
    const sorted = comm.sort((a, b) => a.ts - b.ts);
    for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i]!.ts >= end(sorted[i - 1]!) - 1, `rank ${rank}: comm spans ${sorted[i - 1]!.name} and ${sorted[i]!.name} overlap by ${end(sorted[i - 1]!) - sorted[i]!.ts} µs`);
  }
});
