import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";

// run-tests: own process (it reads the arena's held memory, which other files' tensors would move)

/**
 * The arena's collection budget (src/tensor/arena.ts): a loop that drops its outputs must cycle
 * through about `budget` bytes of blocks (so they stay in cache), not through V8's whole young
 * generation, and a collection must hand the dropped blocks back. The bound is computed from the
 * sizes and the policy, not from what the arena did: the live inputs, plus the budget handed out
 * between two scavenges, plus the one block the call that ran the class dry asks for.
 */
rt.getBackend();
const arena = rt.memoryPool.stats() !== null;
const MiB = 2 ** 20;
const mb = (b: number) => (b / MiB).toFixed(2);

/** Held high-water of a loop of `calls` adds of `n` floats, above what was held before it, and the scavenges it asked for. */
function loopOverBudget(n: number, calls: number): { over: number; collections: number } {
  const x = rt.randn([n]);
  const y = rt.randn([n]);
  for (let i = 0; i < 50; i++) x.add(y); // compiled, and the class has free blocks of this size
  const before = rt.memoryPool.stats()!;
  rt.memoryPool.resetHighWater();
  for (let i = 0; i < calls; i++) x.add(y);
  const after = rt.memoryPool.stats()!;
  return { over: after.heldHighWater - before.held, collections: after.collections - before.collections };
}

for (const kib of [64, 256, 1024]) {
  test(`a loop of dropped ${kib} KiB outputs cycles through at most the budget's blocks`, { skip: !arena && "no native arena" }, () => {
    const policy = rt.memoryPool.policy()!;
    const bytes = kib * 1024;
    // What the arena's own rule allows between two scavenges: the base budget, or three blocks of a large size.
    const budget = Math.max(policy.budget, 3 * bytes);
    const calls = Math.ceil((8 * budget) / bytes); // eight budgets' worth of outputs, none kept
    const { over, collections } = loopOverBudget(bytes / 4, calls);
    assert.ok(over <= budget + bytes, `JavaScript held ${mb(over)} MiB of dropped ${kib} KiB outputs at once; the budget allows ${mb(budget + bytes)} MiB`);
    // Each budget's worth of dropped outputs ends in one scavenge (not more than one per call either).
    assert.ok(collections >= 6 && collections <= calls, `${collections} scavenges for ${calls} calls over ${mb(8 * budget)} MiB of outputs`);
  });
}

test("the default budget is 8 MiB unless RINGTORCH_ARENA_BUDGET_MB says otherwise", { skip: !arena && "no native arena" }, () => {
  const want = process.env.RINGTORCH_ARENA_BUDGET_MB ? Number(process.env.RINGTORCH_ARENA_BUDGET_MB) * MiB : 8 * MiB;
  assert.equal(rt.memoryPool.policy()!.budget, want);
});

