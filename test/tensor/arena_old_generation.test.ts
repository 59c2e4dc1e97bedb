import { test } from "node:test";
import assert from "node:assert/strict";
// Types only (erased): the module itself loads below, after the environment is set.
import type { ArenaPolicy, Tensor } from "../../src/index.js";

// Small policy figures, set before the arena reads them, so that the bound below is tight.
process.env.RINGTORCH_ARENA_FULL_MB = "8";
process.env.RINGTORCH_ARENA_BUDGET_MB = "4";
process.env.RINGTORCH_ARENA_FULL_GROWTH = process.env.RINGTORCH_TEST_FULL_GROWTH ?? "0.5";
const rt = await import("../../src/index.js");

/**
 * Tensors that live across many allocations (a training step's activations, kept for backward)
 * are promoted to V8's old generation, and once dead only a full collection gives their blocks
 * back; V8 is not told of this memory, so the arena asks for those collections itself
 * (src/tensor/arena.ts). This repeats such a step: a live set kept while transients churn through
 * the budget many times over, then dropped. What JavaScript holds must stay within the live set,
 * plus one growth allowance before a full collection (max(fullMin, fullGrowth × the live set)), plus the
 * budget of young tensors between scavenges — for every step, not just the first: a policy that
 * mistakes dead memory for live (it once read the held bytes before V8 had swept a full
 * collection's dead buffers) lets the mark double again and again.
 */
rt.getBackend();
const stats = rt.memoryPool.stats();
const MiB = 2 ** 20;
const mb = (b: number) => (b / MiB).toFixed(1);

/** The live set, one growth allowance before a full collection, and the young tensors between scavenges (see above). */
function heldBound(policy: ArenaPolicy, live: number): number {
  return live + Math.max(policy.fullMin, policy.fullGrowth * live) + 2 * policy.budget + 2 * MiB;
}

/** One step: `keep` tensors kept while transients churn between them (several budgets' worth, so scavenges promote the kept ones), then dropped. Returns the step's held high-water mark. */
function stepHighWater(x: Tensor, keep: number): number {
  rt.memoryPool.resetHighWater();
  const kept: unknown[] = [];
  for (let i = 0; i < keep; i++) {
    kept.push(x.mul(i));
    for (let j = 0; j < 4; j++) x.add(x).relu();
  }
  kept.length = 0;
  return rt.memoryPool.stats()!.heldHighWater;
}

test("held memory stays within the live set's bound when dead tensors reach the old generation", { skip: !stats && "no native arena" }, () => {
  const policy = rt.memoryPool.policy()!;
  assert.deepEqual([policy.fullMin, policy.budget, policy.fullGrowth], [8 * MiB, 4 * MiB, Number(process.env.RINGTORCH_ARENA_FULL_GROWTH)], "the environment's policy was read");
  const x = rt.randn([64 * 1024]); // 256 KiB
  const liveBlocks = 96; // 24 MiB kept through a step: over fullMin / fullGrowth, so that the growth share sets the allowance
  const live = liveBlocks * x.numel * 4;
  const bound = heldBound(policy, live);
  rt.memoryPool.clear();
  const marks = Array.from({ length: 12 }, () => stepHighWater(x, liveBlocks));
  const worst = Math.max(...marks);
  if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`live ${mb(live)} MiB; held high-water per step ${marks.map(mb).join(" ")} (bound ${mb(bound)})`);
  assert.ok(worst <= bound, `JavaScript held up to ${mb(worst)} MiB (step ${marks.indexOf(worst)}) for a live set of ${mb(live)} MiB; the bound is ${mb(bound)} MiB`);
  assert.ok(rt.memoryPool.stats()!.fullCollections > 0, "the arena asked for full collections");
});

/**
 * A model's case: a set that stays live throughout (weights, optimizer state) and per step
 * activations that are kept long enough to reach the old generation, then dropped. After a full
 * collection the arena holds about the persistent set, so the dead activations that pile up before
 * the next one are bounded by fullGrowth of it (or fullMin): the share that sets a training job's
 * peak resident memory.
 */
test("dead activations beside a persistent live set stay within fullGrowth of it", { skip: !stats && "no native arena" }, () => {
  const policy = rt.memoryPool.policy()!;
  const x = rt.randn([64 * 1024]); // 256 KiB
  rt.memoryPool.clear();
  const persistent = Array.from({ length: 160 }, (_, i) => x.mul(i)); // 40 MiB
  const activations = 16; // 4 MiB per step
  const block = x.numel * 4;
  const live = (persistent.length + activations) * block;
  const bound = heldBound(policy, live);
  let worst = 0;
  for (let step = 0; step < 24; step++) worst = Math.max(worst, stepHighWater(x, activations));
  if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`persistent + activations ${mb(live)} MiB; held high-water ${mb(worst)} (bound ${mb(bound)})`);
  assert.ok(worst <= bound, `JavaScript held up to ${mb(worst)} MiB beside ${mb(live)} MiB live; the bound is ${mb(bound)} MiB`);
  assert.equal(persistent.length, 160);
});
