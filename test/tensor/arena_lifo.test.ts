import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { exposeCollector } from "../../src/tensor/arena.js";
import { allocate } from "../../src/tensor/storage.js";

// run-tests: own process (it reads which block the arena hands out next, which other files' tensors would change)

/**
 * The arena hands out the block freed last first (native/pool/arena.cc's free lists are stacks, and
 * a collection returns its dead blocks in the order they were handed out): in a loop that drops its
 * outputs, the next output goes into the block the loop wrote most recently, the one most likely
 * still in cache. The blocks are told apart by what was written into them, read back through an
 * allocation that does not zero its memory.
 */
rt.getBackend();
const arena = rt.memoryPool.stats() !== null;
// An odd size of its own, so that no other test's blocks share its size class.
const N = 3 * 16384 + 5;

/** Two blocks, the first filled with 1 and the second with 2, both dropped before returning. */
function fillAndDrop(): void {
  const first = allocate("float32", N, false);
  const second = allocate("float32", N, false);
  first.data.fill(1);
  second.data.fill(2);
}

test("the block freed last is handed out first", { skip: !arena && "no native arena" }, () => {
  const collect = exposeCollector()!;
  fillAndDrop();
  collect({ type: "minor" });
  const next = allocate("float32", N, false).data;
  assert.ok(next.every((v) => v === 2), `the next block held ${next[0]}, ${next[N - 1]}: expected the second (last freed) block, filled with 2`);
  const after = allocate("float32", N, false).data;
  assert.ok(after.every((v) => v === 1), `the block after held ${after[0]}: expected the first block, filled with 1`);
});
