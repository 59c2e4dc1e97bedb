import { test } from "node:test";
import assert from "node:assert/strict";
import { runInNewContext } from "node:vm";
import * as rt from "../../src/index.js";

/**
 * No block is handed out again while anything over it is alive. A block goes back to its free list
 * when no SharedArrayBuffer over its kept backing store is left (native/pool/arena.cc); these tests
 * keep memory alive in each way a program can (the tensor, a view of it, its array, only its
 * SharedArrayBuffer) across thousands of outputs of the same size classes and many collections,
 * young and full, and check every kept value against the pattern written, so that a block reused
 * too early shows as overwritten data. Skipped on the reference backend (no arena).
 */
rt.getBackend(); // the backend, and with it the arena, is set up on first use
const arena = rt.memoryPool.stats() !== null;
const gc = runInNewContext("gc") as ((options?: { type: "minor" | "major" }) => void) | undefined;

const pattern = (id: number, i: number): number => id * 1000 + (i % 997);

function filled(id: number, n: number): rt.Tensor {
  const t = rt.empty([n]);
  const d = t.storage.data as Float32Array;
  for (let i = 0; i < n; i++) d[i] = pattern(id, i);
  return t;
}

function firstWrong(id: number, d: Float32Array, from = 0): number {
  for (let i = 0; i < d.length; i++) if (d[i] !== pattern(id, i + from)) return i;
  return -1;
}

function keptBuffer(id: number, n: number): { buffer: SharedArrayBuffer | null } {
  return { buffer: filled(id, n).storage.data.buffer as SharedArrayBuffer };
}

function firstWrongIn(id: number, box: { buffer: SharedArrayBuffer | null }): number {
  return firstWrong(id, new Float32Array(box.buffer!));
}

test("memory kept as a tensor, a view, an array or only a SharedArrayBuffer is never handed out again while kept", { skip: !arena && "no native arena" }, () => {
  const sizes = [1, 1024, 16384, 65536]; // 4 B to 256 KiB: 64 B blocks up to mmap'd ones
  const tensors: [number, rt.Tensor][] = [];
  const views: [number, rt.Tensor, number][] = [];
  const arrays: [number, Float32Array][] = [];
  const buffers: [number, SharedArrayBuffer, number][] = [];
  let id = 1;
  for (let round = 0; round < 4; round++) {
    for (const n of sizes) {
      tensors.push([id, filled(id, n)]);
      id++;
      const v = filled(id, n);
      views.push([id, v.narrow(0, n >> 1, n - (n >> 1)), n >> 1]); // the original tensor is dropped
      id++;
      arrays.push([id, filled(id, n).storage.data as Float32Array]);
      id++;
      const b = filled(id, n).storage.data.buffer as SharedArrayBuffer;
      buffers.push([id, b, n]);
      id++;
    }
  }
  const before = rt.memoryPool.stats()!;
  // Outputs of the same size classes, dropped at once and written with other values: thousands of
  // blocks through the free lists, with the arena's scavenges and a few full collections between.
  const sources = sizes.map((n) => rt.full([n], -1));
  for (let step = 0; step < 3000; step++) {
    for (const s of sources) s.add(s).mul(s);
    if (step % 1000 === 999) gc?.();
    // A check outside any collection (DataParallel's workers make one at each answer) returns only dead blocks too.
    if (step % 100 === 50) rt.memoryPool.reclaim();
  }
  const after = rt.memoryPool.stats()!;
  assert.ok(after.recycled - before.recycled > 64 * 2 ** 20, `the loop recycled only ${((after.recycled - before.recycled) / 2 ** 20).toFixed(1)} MiB: the check would prove nothing`);
  assert.ok(after.collections > before.collections, "the arena ran no collection during the loop");
  for (const [k, t] of tensors) assert.equal(firstWrong(k, t.storage.data as Float32Array), -1, `tensor ${k} of ${t.numel} elements was overwritten`);
  for (const [k, v, from] of views) {
    const d = (v.storage.data as Float32Array).subarray(v.offset, v.offset + v.numel);
    assert.equal(firstWrong(k, d, from), -1, `view ${k} was overwritten`);
  }
  for (const [k, a] of arrays) assert.equal(firstWrong(k, a), -1, `array ${k} of ${a.length} elements was overwritten`);
  for (const [k, b, n] of buffers) {
    assert.equal(b.byteLength, 4 * n);
    assert.equal(firstWrong(k, new Float32Array(b)), -1, `SharedArrayBuffer ${k} of ${b.byteLength} bytes was overwritten`);
  }
});

test("a block comes back once the last buffer over it is dropped, and is then reused", { skip: (!arena && "no native arena") || (!gc && "no gc") }, () => {
  const n = 1 << 18; // 1 MiB
  const box = keptBuffer(7, n);
  gc!();
  gc!();
  const heldWhileKept = rt.memoryPool.stats()!.held;
  assert.ok(heldWhileKept >= 4 * n, `held ${heldWhileKept} B while a 1 MiB buffer is alive`);
  // The buffer is read and viewed in a function of its own: a temporary in this function's frame
  // would stay alive (V8 scans a running interpreted frame's registers whole) and keep it.
  assert.equal(firstWrongIn(7, box), -1);
  box.buffer = null;
  gc!();
  const afterDrop = rt.memoryPool.stats()!;
  assert.ok(afterDrop.held <= heldWhileKept - 4 * n, `held ${afterDrop.held} B after the last buffer died, ${heldWhileKept} B before: the block did not come back`);
  rt.empty([n]);
  assert.ok(rt.memoryPool.stats()!.recycled >= afterDrop.recycled + 4 * n, "the next tensor of that size did not reuse the returned block");
});

test("tensors kept while V8's own collections run inside their allocations keep their values", { skip: !arena && "no native arena" }, () => {
  // Each output's SharedArrayBuffer is a V8 object, so its allocation can start a scavenge, whose
  // callback then checks the blocks handed out: a block must not look free to it before the buffer
  // over it exists. Hundreds of thousands of small kept outputs (and garbage beside them, so that
  // V8 collects on its own many times) give that window many chances; a block reclaimed inside it
  // would be handed out again and show here as another tensor's values.
  const kept: rt.Tensor[] = [];
  const before = rt.memoryPool.stats()!.collections;
  let garbage: unknown[] = [];
  for (let id = 0; id < 200_000; id++) {
    const t = rt.empty([4]);
    (t.storage.data as Float32Array).fill(id);
    kept.push(t);
    garbage.push({ id, pad: [id, id] });
    if (garbage.length > 1000) garbage = [];
  }
  assert.ok(rt.memoryPool.stats()!.collections >= before, "stats readable");
  let wrong = 0;
  let first = -1;
  for (let id = 0; id < kept.length; id++) {
    const d = kept[id]!.storage.data as Float32Array;
    if (d[0] !== id || d[3] !== id) {
      wrong++;
      if (first < 0) first = id;
    }
  }
  assert.equal(wrong, 0, `${wrong} kept tensors were overwritten (first: ${first}, now ${first >= 0 ? (kept[first]!.storage.data as Float32Array)[0] : ""})`);
});
