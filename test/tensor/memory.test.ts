import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";

// run-tests: own process (it measures the process's resident memory, which other files' tests would move)

/**
 * 10,000 steps of a small training loop (two linear layers, manual SGD, fresh gradients every
 * step): resident memory after warm-up must stay flat. Autograd must free each step's graph, and
 * the pool must not hoard buffers.
 */
test("steady-state memory stays flat over 10,000 training steps", () => {
  rt.manualSeed(0);
  const w1 = rt.randn([64, 32]).mul(0.1).requiresGrad_();
  const w2 = rt.randn([10, 64]).mul(0.1).requiresGrad_();
  const x = rt.randn([16, 32]);
  const y = rt.randn([16, 10]);
  const step = () => {
    const loss = x.linear(w1).relu().linear(w2).sub(y).square().mean();
    loss.backward();
    rt.noGrad(() => {
      for (const w of [w1, w2]) {
        w.sub_(w.grad!.mul(0.01));
        w.grad = null;
      }
    });
    return loss;
  };
  for (let i = 0; i < 1000; i++) step();
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  let last = 0;
  for (let i = 0; i < 10000; i++) last = step().item();
  (globalThis as { gc?: () => void }).gc?.();
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  assert.ok(Number.isFinite(last));
  if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`rss growth ${grown.toFixed(1)} MiB`);
  assert.ok(grown < 48, `resident memory grew by ${grown.toFixed(1)} MiB over 10,000 steps`);
});
