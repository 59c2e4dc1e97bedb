import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { BALANCE_WINDOW, PieceBalancer } from "../../src/nn/data_parallel/balance.js";
import { SlowBackwardOffMainMLP, SlowOffMainMLP } from "./fixtures/dp_model.js";

const { nn } = rt;
type Tensor = rt.Tensor;

/** Feeds one window of identical steps to worker `w`. */
function window(b: PieceBalancer, w: number, lateMs: number, sampleMs: number): void {
  for (let i = 0; i < BALANCE_WINDOW; i++) b.record(w, lateMs, sampleMs);
}

describe("DataParallel's balancer: pieces cut by the threads' finish times", () => {
  it("moves one sample per window towards the thread that finished first, only past a sample's cost, and never empties a piece", () => {
    const b = new PieceBalancer(1);
    assert.deepEqual(b.sizes(32, 2), [16, 16]);
    // The worker late by less than a sample's cost: nothing moves.
    window(b, 0, 0.5, 0.7);
    assert.deepEqual(b.sizes(32, 2), [16, 16]);
    // Late by more: one sample to the main thread, and only once the window is full.
    for (let i = 0; i < BALANCE_WINDOW - 1; i++) b.record(0, 1.3, 0.7);
    assert.deepEqual(b.sizes(32, 2), [16, 16]);
    b.record(0, 1.3, 0.7);
    assert.deepEqual(b.sizes(32, 2), [17, 15]);
    // The median, not the mean: a few preempted steps do not move it.
    for (let i = 0; i < BALANCE_WINDOW; i++) b.record(0, i < 4 ? 50 : 0.1, 0.7);
    assert.deepEqual(b.sizes(32, 2), [17, 15]);
    // The main thread late: back one sample.
    window(b, 0, -1, 0.7);
    assert.deepEqual(b.sizes(32, 2), [16, 16]);
    // A worker always late keeps one sample; the shift does not grow past what the batch allowed.
    for (let k = 0; k < 5; k++) {
      window(b, 0, 10, 0.1);
      b.sizes(4, 2);
    }
    assert.deepEqual(b.sizes(4, 2), [3, 1]);
    window(b, 0, -10, 0.1);
    assert.deepEqual(b.sizes(4, 2), [2, 2]);
    assert.deepEqual(b.sizes(1, 1), [1]);
  });

  it("three replicas: each worker's piece moves by its own lateness; the main thread keeps a sample", () => {
    const b = new PieceBalancer(2);
    assert.deepEqual(b.sizes(10, 3), [4, 3, 3]);
    window(b, 1, 2, 0.5);
    window(b, 0, 0, 0.5);
    assert.deepEqual(b.sizes(10, 3), [5, 3, 2]);
    for (let k = 0; k < 6; k++) {
      window(b, 0, -2, 0.5);
      window(b, 1, -2, 0.5);
      b.sizes(10, 3);
    }
    const sizes = b.sizes(10, 3);
    assert.equal(sizes.reduce((s, v) => s + v, 0), 10);
    assert.ok(sizes[0]! >= 1, JSON.stringify(sizes));
  });
});

describe("nn.DataParallel with a slower replica", () => {
  const opened: rt.nn.DataParallel[] = [];
  after(() => Promise.all(opened.map((dp) => dp.close())));
  const fixture = new URL("./fixtures/dp_model.ts", import.meta.url).href;

  it("gives the slower worker fewer samples, with the gradients of one thread on the whole batch (plain call and forwardLoss); balance: false keeps equal pieces; spinMs: 0 blocks at once", () => {
    rt.setNumThreads(1);
    rt.manualSeed(11);
    const model = new SlowOffMainMLP();
    const dp = new nn.DataParallel(model, { threads: 2, classes: [fixture], criterion: new nn.MSELoss() });
    const even = new nn.DataParallel(model, { threads: 2, classes: [fixture], balance: false, spinMs: 0 });
    opened.push(dp, even);
    const x = rt.randn([16, 6]);
    const y = rt.randn([16, 3]);
    model.zeroGrad();
    nn.functional.mseLoss(model.call(x) as Tensor, y).backward();
    const ref = [...model.parameters()].map((p) => p.grad!.clone());
    // The worker's forward takes 8 ms more than the main thread's on a piece of the same size.
    for (let step = 0; step < 4 * BALANCE_WINDOW; step++) {
      model.zeroGrad();
      (step % 2 ? dp.forwardLoss(x, y) : nn.functional.mseLoss(dp.call(x), y)).backward();
      model.zeroGrad();
      nn.functional.mseLoss(even.call(x), y).backward();
    }
    const sizes = dp.pieceSizes(16);
    assert.ok(sizes[0]! > 8 && sizes[0]! + sizes[1]! === 16, `pieces ${sizes.join("/")}`);
    assert.deepEqual(even.pieceSizes(16), [8, 8]);
    for (const loss of [() => nn.functional.mseLoss(dp.call(x), y), () => dp.forwardLoss(x, y)]) {
      model.zeroGrad();
      loss().backward();
      [...model.parameters()].forEach((p, i) => assert.ok(p.grad!.sub(ref[i]!).abs().max().item() <= 1e-5, `grad ${i} with pieces ${sizes.join("/")}`));
    }
    model.zeroGrad();
    nn.functional.mseLoss(even.call(x), y).backward();
    [...model.parameters()].forEach((p, i) => assert.ok(p.grad!.sub(ref[i]!).abs().max().item() <= 1e-5, `grad ${i}, equal pieces, no polling`));
    assert.throws(() => new nn.DataParallel(model, { balance: 1 } as never), /balance must be true or false, got number/);
    assert.throws(() => new nn.DataParallel(model, { spinMs: -1 }), /spinMs must be a number of milliseconds in 0\.\.1000, got -1/);
    assert.throws(() => dp.pieceSizes(-1), /pieceSizes expects a batch size \(an integer >= 0\), got -1/);
  });

  it("adds the gradients a replica has handed over while its backward goes on: one thread's gradients, accumulated over two calls, 2 and 3 replicas; an unused parameter keeps no gradient", () => {
    rt.setNumThreads(1);
    rt.manualSeed(12);
    const model = new SlowBackwardOffMainMLP();
    const x = rt.randn([10, 6]);
    const y = rt.randn([10, 3]);
    model.zeroGrad();
    nn.functional.mseLoss(model.call(x) as Tensor, y).backward();
    const ref = [...model.parameters()].map((p) => (p.grad ? p.grad.clone() : null));
    assert.equal(model.unused.weight.grad, null);
    for (const threads of [2, 3]) {
      const dp = new nn.DataParallel(model, { threads, classes: [fixture], balance: false });
      opened.push(dp);
      model.zeroGrad();
      // Two calls without zeroGrad between them: the second adds onto the first's gradients.
      for (let call = 0; call < 2; call++) nn.functional.mseLoss(dp.call(x), y).backward();
      [...model.parameters()].forEach((p, i) => {
        if (ref[i] === null) assert.equal(p.grad, null, `parameter ${i} has no gradient (${threads} threads)`);
        else assert.ok(p.grad!.sub(ref[i]!.mul(2)).abs().max().item() <= 1e-5, `grad ${i}, ${threads} threads`);
      });
    }
  });
});
