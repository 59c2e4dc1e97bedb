import { test } from "node:test";
import assert from "node:assert/strict";

// Small policy figures, set before the arena reads them, so that the bound below is tight.
process.env.RINGTORCH_ARENA_FULL_MB = "8";
process.env.RINGTORCH_ARENA_BUDGET_MB = "4";
const rt = await import("../../src/index.js");

/**
 * Tensors that live across many allocations (a training step's activations, kept for backward)
 * are promoted to V8's old generation, and once dead only a full collection gives their blocks
 * back; V8 is not told of this memory, so the arena asks for those collections itself
 * (src/tensor/arena.ts). This repeats such a step: a live set kept while transients churn through
 * the budget many times over, then dropped. What JavaScript holds must stay within the live set,
 * plus one growth allowance before a full collection (max(fullMin, the live set)), plus the
 * budget of young tensors between scavenges — for every step, not just the first: a policy that
 * mistakes dead memory for live (it once read the held bytes before V8 had swept a full
 * collection's dead buffers) lets the mark double again and again.
 */
rt.getBackend();
const stats = rt.memoryPool.stats();
const MiB = 2 ** 20;

test("held memory stays within the live set's bound when dead tensors reach the old generation", { skip: !stats && "no native arena" }, () => {
  const policy = rt.memoryPool.policy()!;
  assert.deepEqual([policy.fullMin, policy.budget], [8 * MiB, 4 * MiB], "the environment's policy was read");
  const x = rt.randn([64 * 1024]); // 256 KiB
  const liveBlocks = 48; // 12 MiB kept through a step
  const live = liveBlocks * x.numel * 4;
  const bound = live + Math.max(policy.fullMin, live) + 2 * policy.budget + 2 * MiB;
  rt.memoryPool.clear();
  const marks: number[] = [];
  for (let step = 0; step < 12; step++) {
    rt.memoryPool.resetHighWater();
    const kept: unknown[] = [];
    for (let i = 0; i < liveBlocks; i++) {
      kept.push(x.mul(i));
      // Transients: several budgets' worth between two kept tensors, so that scavenges promote `kept`.
      for (let j = 0; j < 4; j++) x.add(x).relu();
    }
    kept.length = 0;
    marks.push(rt.memoryPool.stats()!.heldHighWater);
  }
  const worst = Math.max(...marks);
  const mb = (b: number) => (b / MiB).toFixed(1);
  if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`live ${mb(live)} MiB; held high-water per step ${marks.map(mb).join(" ")} (bound ${mb(bound)})`);
  assert.ok(worst <= bound, `JavaScript held up to ${mb(worst)} MiB (step ${marks.indexOf(worst)}) for a live set of ${mb(live)} MiB; the bound is ${mb(bound)} MiB`);
  assert.ok(rt.memoryPool.stats()!.fullCollections > 0, "the arena asked for full collections");
});
