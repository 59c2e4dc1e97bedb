import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explain, launch } from "./harness.js";

interface Run {
  order: string[];
  held: number[];
  start: number;
  /** What the message buffers the stage made during this step take in the pool (kept for reuse, not left behind). */
  madeBytes: number;
}
interface Report {
  probe: { keptBytes: number; afterDrop: number; expected: number };
  gpipe: Run;
  "1f1b": Run;
}

/**
 * Activation memory of the schedules, read from the tensor pool (workers/pipeline_memory.ts): 2
 * ranks, the model Linear(64, 256) ReLU Linear(256, 256) | Linear(256, 256) ReLU Linear(256, 128),
 * 6 micro-batches of 8 samples. After each action the worker runs a full collection and reads the
 * bytes the pool holds. One micro-batch's activations, from the layers (float32, [8, 256] each):
 * stage 0 keeps ReLU's input, the second Linear's input and its output (the root of its backward);
 * stage 1 its received input, ReLU's input and the last Linear's input, and keeps the [8, 128]
 * output of every micro-batch to the end of the step (the step's return value).
 * Held bytes are counted above the step's end, where no micro-batch is alive.
 */
const [H, O, MB, M, P] = [256, 128, 8, 6, 2];
const ACT = MB * H * 4;
const PER_MICROBATCH = [3 * ACT, 3 * ACT];
const KEPT_OUTPUT = [0, MB * O * 4];

describe("pipeline activation memory from the tensor pool", () => {
  it("1F1B holds at most p-s micro-batches of activations on stage s at every action; GPipe all m", async () => {
    const results = await launch({ world: 2, script: "pipeline_memory.ts", timeoutMs: 120_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    results.forEach((r, s) => {
      const rep = r.result as Report;
      // The reading is exact: tensors of known size are counted to the byte, and given back when dropped.
      assert.deepEqual([rep.probe.keptBytes, rep.probe.afterDrop], [rep.probe.expected, 0], `rank ${s}: the pool's reading after a collection`);
      // A step gives back all it took but the outputs it returns: no message or activation stays
      // behind. Message buffers it had to make (more receives in flight than in the warm-up steps)
      // stay for reuse, and are counted apart.
      for (const [name, run] of [["GPipe", rep.gpipe], ["1F1B", rep["1f1b"]]] as const) {
        const left = run.held.at(-1)! - run.start - M * KEPT_OUTPUT[s]! - run.madeBytes;
        assert.ok(Math.abs(left) <= 1024, `rank ${s}: ${name} still held ${left} bytes at the end of the step beyond its outputs`);
      }
      const above = (run: Run, i: number) => run.held[i]! - run.held.at(-1)! + (M - outputsSoFar(run, i)) * KEPT_OUTPUT[s]!;
      const peak = (run: Run) => Math.max(...run.held.map((_, i) => above(run, i)));
      const oneF = rep["1f1b"];
      const gpipe = rep.gpipe;
      const detail = `rank ${s}: 1F1B ${fmt(oneF, above)}; GPipe ${fmt(gpipe, above)} (KiB above the step's end)`;
      assert.ok(peak(oneF) <= (P - s) * PER_MICROBATCH[s]!, `${detail}: 1F1B above ${P - s} micro-batches (${(P - s) * PER_MICROBATCH[s]! / 1024} KiB)`);
      assert.ok(peak(gpipe) >= (M - 1) * PER_MICROBATCH[s]!, `${detail}: GPipe should hold about ${M} micro-batches`);
      // What 1F1B saves is the micro-batches GPipe keeps beyond p-s.
      assert.ok(peak(gpipe) - peak(oneF) >= (M - (P - s) - 1) * PER_MICROBATCH[s]!, detail);
    });
  });
});

/** Micro-batches whose output the last stage has kept once action i has run. */
function outputsSoFar(run: Run, i: number): number {
  return run.order.slice(0, i + 1).filter((a) => a.startsWith("F")).length;
}

function fmt(run: Run, above: (run: Run, i: number) => number): string {
  return run.order.map((a, i) => `${a}:${(above(run, i) / 1024).toFixed(0)}`).join(" ");
}
