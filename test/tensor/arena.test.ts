import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import * as rt from "../../src/index.js";

/**
 * The native arena behind tensor memory (src/tensor/arena.ts, native/pool/arena.cc): dead tensors'
 * blocks come back without any explicit release, memory a loop cycles through stays bounded, and a
 * block another thread still holds is never handed out again. Skipped on the reference backend,
 * where tensors are plain SharedArrayBuffers.
 */
rt.getBackend(); // the backend, and with it the arena, is set up on first use
const arena = rt.memoryPool.stats() !== null;
const MiB = 2 ** 20;

test("a loop that creates and drops tensors reuses their memory (nothing released explicitly)", { skip: !arena && "no native arena" }, () => {
  rt.manualSeed(0);
  const a = rt.randn([256, 256]);
  const x = rt.randn([65536]);
  const before = rt.memoryPool.stats()!;
  let made = 0;
  // 1,000 iterations allocate 1,000 × (256 KiB × 4) = 1 GiB of outputs; none is kept.
  for (let i = 0; i < 1000; i++) {
    const h = a.matmul(a);
    h.softmax(-1);
    x.add(x).mul(x);
    made += 4 * 256 * 1024;
  }
  const after = rt.memoryPool.stats()!;
  const fresh = (after.fresh - before.fresh) / MiB;
  assert.ok(after.recycled - before.recycled > made / 2, `only ${((after.recycled - before.recycled) / MiB).toFixed(0)} MiB of ${(made / MiB).toFixed(0)} MiB came from recycled blocks`);
  assert.ok(fresh < 256, `the loop took ${fresh.toFixed(0)} MiB fresh from the OS for ${(made / MiB).toFixed(0)} MiB of dropped tensors`);
  assert.ok((after.held + after.free) / MiB < 384, `the arena holds ${((after.held + after.free) / MiB).toFixed(0)} MiB after the loop`);
});

test("recycled blocks come back zeroed where zeros were asked for, with the exact length", { skip: !arena && "no native arena" }, () => {
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 20; i++) rt.full([1000 + round], 7); // dirty blocks of this size class, dropped at once
    const z = rt.zeros([1000 + round]);
    assert.equal(z.storage.data.length, 1000 + round);
    assert.equal(z.storage.data.buffer.byteLength, 4 * (1000 + round));
    const data = z.storage.data as Float32Array;
    for (let k = 0; k < data.length; k++) if (data[k] !== 0) assert.fail(`element ${k} of a fresh zeros(${1000 + round}) is ${data[k]}`);
  }
});

test("a block another thread holds is not reused until that thread drops it", { skip: !arena && "no native arena" }, async () => {
  const n = 1 << 16;
  let t: rt.Tensor | null = rt.arange(n).to("float32");
  const sab = t.storage.data.buffer as SharedArrayBuffer;
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads");
     let held = null;
     parentPort.on("message", (m) => {
       if (m.buf) { held = new Float32Array(m.buf); parentPort.postMessage("got"); return; }
       let bad = -1;
       for (let i = 0; i < held.length; i++) if (held[i] !== i) { bad = i; break; }
       held = null;
       parentPort.postMessage({ bad });
     });`,
    { eval: true },
  );
  const next = () => new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the worker did not answer within 30 s")), 30_000);
    worker.once("message", (m) => (clearTimeout(timer), resolve(m)));
  });
  try {
    worker.postMessage({ buf: sab });
    assert.equal(await next(), "got");
    const checked = next();
    t = null;
    // Drop this thread's handle, collect, then churn through blocks of the same size class.
    const sizeClass: rt.Tensor[] = [];
    for (let round = 0; round < 20; round++) {
      (globalThis as { gc?: () => void }).gc?.();
      for (let i = 0; i < 50; i++) rt.full([n], -1);
      sizeClass.push(rt.full([n], -2));
    }
    worker.postMessage({ check: true });
    const { bad } = (await checked) as { bad: number };
    assert.equal(bad, -1, `the worker saw element ${bad} overwritten while it held the buffer`);
    assert.equal(t, null);
    assert.equal(sizeClass.length, 20);
  } finally {
    await worker.terminate();
  }
});

/**
 * One training step of a fixed model (the MLP of bench/mlp.ts, scaled down: 256-512-512-10, Adam,
 * batch 64) needs its parameters, their gradients and Adam's two moments (4 × the parameters),
 * plus the step's activations and their gradients. The arena's high-water mark over 30 steady
 * steps must stay within a small multiple of that: a pool that hoards blocks, or a graph kept
 * alive past its step, breaks the bound.
 */
test("the pool's high-water mark over a fixed training step stays bounded", { skip: !arena && "no native arena" }, () => {
  rt.manualSeed(0);
  rt.memoryPool.clear(); // free blocks left by earlier tests would count toward the mark
  const { nn, optim } = rt;
  const model = new nn.Sequential(new nn.Linear(256, 512), new nn.ReLU(), new nn.Linear(512, 512), new nn.ReLU(), new nn.Linear(512, 10));
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const lossFn = new nn.CrossEntropyLoss();
  const x = rt.randn([64, 256]);
  const y = rt.randint(0, 10, [64]);
  const step = () => {
    opt.zeroGrad();
    lossFn.call(model.call(x), y).backward();
    opt.step();
  };
  for (let i = 0; i < 10; i++) step();
  const paramBytes = model.parameters().reduce((s, p) => s + 4 * p.numel, 0);
  const activationBytes = 4 * 64 * (256 + 512 * 4 + 10 * 2); // inputs, pre/post-ReLU, logits (and grads alike)
  const need = 4 * paramBytes + 2 * activationBytes;
  rt.memoryPool.resetHighWater();
  for (let i = 0; i < 30; i++) step();
  const s = rt.memoryPool.stats()!;
  if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`need ${(need / MiB).toFixed(1)} MiB, held high water ${(s.heldHighWater / MiB).toFixed(1)} MiB, held+free high water ${(s.highWater / MiB).toFixed(1)} MiB`);
  assert.ok(s.heldHighWater <= 4 * need + 32 * MiB, `JavaScript held up to ${(s.heldHighWater / MiB).toFixed(1)} MiB of tensor memory for a step that needs ${(need / MiB).toFixed(1)} MiB`);
  assert.ok(s.highWater <= 6 * need + 64 * MiB, `the arena reached ${(s.highWater / MiB).toFixed(1)} MiB (held + free) for a step that needs ${(need / MiB).toFixed(1)} MiB`);
});
