import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { ExitsInBackward, ReportsNewSpace, ResidualMLP, TokenCrossEntropy } from "./fixtures/dp_model.js";

const { nn, optim } = rt;
type Tensor = rt.Tensor;

function maxDiff(a: Tensor, b: Tensor): number {
  return a.sub(b).abs().max().item();
}

/** Gradients of the module on the whole batch, in one thread: the reference. */
function referenceGrads(model: rt.nn.Module, x: Tensor, y: Tensor): { out: Tensor; grads: Tensor[] } {
  model.zeroGrad();
  const out = model.call(x) as Tensor;
  nn.functional.mseLoss(out, y).backward();
  const grads = [...model.parameters()].map((p) => p.grad!.clone());
  model.zeroGrad();
  return { out: out.detach(), grads };
}

const opened: rt.nn.DataParallel[] = [];
function dataParallel(model: rt.nn.Module, options: rt.nn.DataParallelOptions): rt.nn.DataParallel {
  const dp = new nn.DataParallel(model, options);
  opened.push(dp);
  return dp;
}
after(() => Promise.all(opened.map((dp) => dp.close())));

describe("nn.DataParallel on worker threads", () => {
  rt.setNumThreads(1);

  it("gives the gradients of one thread on the whole batch (MLP; 1, 2, 3 replicas; batches that do not divide, and smaller than the replicas)", () => {
    rt.manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(6, 16), new nn.GELU(), new nn.Linear(16, 16), new nn.Tanh(), new nn.Linear(16, 3));
    for (const threads of [1, 2, 3]) {
      const dp = dataParallel(model, { threads });
      for (const n of [10, 2, 1]) {
        const x = rt.randn([n, 6]);
        const y = rt.randn([n, 3]);
        const ref = referenceGrads(model, x, y);
        const out = dp.call(x);
        nn.functional.mseLoss(out, y).backward();
        assert.ok(maxDiff(out, ref.out) <= 1e-6, `output, ${threads} threads, batch ${n}`);
        [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-5, `grad ${i}, ${threads} threads, batch ${n}`));
        model.zeroGrad();
      }
    }
  });

  it("replicas see optimizer steps on the shared parameters: 3 SGD steps match one thread", () => {
    rt.manualSeed(1);
    const a = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
    const b = nn.deepCopy(a);
    const dp = dataParallel(b, { threads: 2 });
    const optA = new optim.SGD(a.parameters(), { lr: 0.1, momentum: 0.9 });
    const optB = new optim.SGD(b.parameters(), { lr: 0.1, momentum: 0.9 });
    for (let step = 0; step < 3; step++) {
      const x = rt.randn([7, 6]);
      const y = rt.randn([7, 3]);
      for (const [m, opt] of [[a, optA], [dp, optB]] as const) {
        opt.zeroGrad();
        nn.functional.mseLoss(m.call(x) as Tensor, y).backward();
        opt.step();
      }
    }
    [...a.parameters()].forEach((p, i) => assert.ok(maxDiff([...b.parameters()][i]!, p) <= 1e-5, `parameter ${i}`));
  });

  it("a small Transformer (attention, layer norm, gelu activation held as a function) gives the same gradients", () => {
    rt.manualSeed(2);
    const layer = () => new nn.TransformerEncoderLayer(16, 4, { dimFeedforward: 32, dropout: 0, activation: "gelu", batchFirst: true });
    const model = new nn.Sequential(layer(), layer(), new nn.Linear(16, 3));
    const x = rt.randn([5, 7, 16]);
    const y = rt.randn([5, 7, 3]);
    const ref = referenceGrads(model, x, y);
    const dp = dataParallel(model, { threads: 2 });
    const out = dp.call(x);
    nn.functional.mseLoss(out, y).backward();
    assert.ok(maxDiff(out, ref.out) <= 1e-5);
    [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-5, `grad ${i}`));
    // Without grad (evaluation), the outputs are gathered and nothing is recorded.
    const evalOut = rt.noGrad(() => dp.call(x));
    assert.equal(evalOut.requiresGrad, false);
    assert.ok(maxDiff(evalOut, ref.out) <= 1e-5);
  });

  it("forwardLoss: the criterion in the replicas gives the loss and gradients of one thread with the criterion on the whole batch (mean and sum, uneven pieces, 1-3 threads)", () => {
    rt.manualSeed(6);
    const model = new nn.Sequential(new nn.Linear(6, 16), new nn.GELU(), new nn.Linear(16, 4));
    const cases = [
      { criterion: new nn.MSELoss(), target: (n: number) => rt.randn([n, 4]), threadCounts: [1, 2, 3] },
      { criterion: new nn.MSELoss({ reduction: "sum" }), target: (n: number) => rt.randn([n, 4]), threadCounts: [3] },
      { criterion: new nn.CrossEntropyLoss(), target: (n: number) => rt.randint(0, 4, [n]), threadCounts: [2] },
    ];
    for (const { criterion, target, threadCounts } of cases) {
      for (const threads of threadCounts) {
        const dp = dataParallel(model, { threads, criterion });
        for (const n of [10, 7, 2, 1]) {
          const x = rt.randn([n, 6]);
          const y = target(n);
          model.zeroGrad();
          const refLoss = criterion.call(model.call(x) as Tensor, y) as Tensor;
          refLoss.backward();
          const refGrads = [...model.parameters()].map((p) => p.grad!.clone());
          model.zeroGrad();
          const loss = dp.forwardLoss(x, y);
          const what = `${criterion.constructor.name} ${(criterion as unknown as { reduction: string }).reduction}, ${threads} threads, batch ${n}`;
          assert.deepEqual(loss.shape, [], what);
          assert.ok(Math.abs(loss.item() - refLoss.item()) <= 1e-5 * Math.max(1, Math.abs(refLoss.item())), `loss, ${what}`);
          loss.backward();
          [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, refGrads[i]!) <= 1e-5, `grad ${i}, ${what}`));
          // Without grad (evaluation) the loss is combined all the same and nothing is recorded.
          const evalLoss = rt.noGrad(() => dp.forwardLoss(x, y));
          assert.equal(evalLoss.requiresGrad, false);
          assert.ok(Math.abs(evalLoss.item() - refLoss.item()) <= 1e-5 * Math.max(1, Math.abs(refLoss.item())), `evaluation loss, ${what}`);
        }
        model.zeroGrad();
      }
    }
  });

  it("forwardLoss: the replicas' backward, run at once with a seed of 1, is scaled by the gradient the loss gets; a call whose backward never came leaves nothing behind", () => {
    rt.manualSeed(8);
    const model = new nn.Sequential(new nn.Linear(6, 16), new nn.GELU(), new nn.Linear(16, 4));
    const criterion = new nn.CrossEntropyLoss();
    const dp = dataParallel(model, { threads: 3, criterion });
    for (const n of [9, 5]) {
      const x = rt.randn([n, 6]);
      const y = rt.randint(0, 4, [n]);
      model.zeroGrad();
      // The reference: one thread on the whole batch, the loss's gradient 2.5 (not the pieces' shares).
      (criterion.call(model.call(x) as Tensor, y) as Tensor).mul(2.5).backward();
      const refGrads = [...model.parameters()].map((p) => p.grad!.clone());
      model.zeroGrad();
      // A call whose backward never runs: its replicas' gradients must not reach the next call's.
      dp.forwardLoss(rt.randn([n, 6]), rt.randint(0, 4, [n]));
      dp.forwardLoss(x, y).mul(2.5).backward();
      [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, refGrads[i]!) <= 1e-5, `grad ${i}, batch ${n}`));
    }
  });

  it("replica threads run with a 1 MiB semi-space (young_generation.ts): V8 reports their new space at 2 MiB at most after many calls", () => {
    const dp = dataParallel(new ReportsNewSpace(), { threads: 2, classes: [new URL("./fixtures/dp_model.ts", import.meta.url).href] });
    const x = rt.randn([4, 2]);
    // Enough calls for V8 to have grown a default young generation (to 16 MiB semi-spaces; checked: 32 MiB reported).
    let y = dp.call(x);
    for (let i = 0; i < 3000; i++) y = dp.call(x);
    const workerRows = Array.from(y.storage.data as Float32Array).slice(2);
    assert.ok(workerRows.every((mb) => mb > 0 && mb <= 2), `the replica thread's new space: ${workerRows} MiB`);
  });

  it("forwardLoss: a worker thread that exits during the backward it runs at once is reported as exited, not after the timeout", () => {
    const dp = dataParallel(new ExitsInBackward(), {
      threads: 2, criterion: new nn.MSELoss(), timeoutMs: 60_000, classes: [new URL("./fixtures/dp_model.ts", import.meta.url).href],
    });
    // The worker dies in the backward it starts right after answering its forward: the answer stands
    // (the exit handler leaves an answered request alone) and the wait for the backward hears of
    // the exit. Without the exit reaching BACKWARD_DONE that wait runs out timeoutMs and says "did
    // not answer"; with the handler overwriting the answer, the forward's wait may say "forward".
    assert.throws(
      () => dp.forwardLoss(rt.randn([6, 4]), rt.randn([6, 2])).backward(),
      /DataParallel: replica 1 \(worker thread \d+\) exited during its backward/,
    );
    // A later call finds the replica gone at once, before its forward is answered.
    assert.throws(() => dp.forwardLoss(rt.randn([6, 4]), rt.randn([6, 2])), /DataParallel: replica 1 \(worker thread \d+\) exited before answering its forward/);
  });

  it("forwardLoss: a Transformer trained 3 SGD steps with a loss class of the user's own matches one thread; the plain call still works beside it", () => {
    rt.manualSeed(7);
    const layer = () => new nn.TransformerEncoderLayer(16, 4, { dimFeedforward: 32, dropout: 0, activation: "gelu", batchFirst: true });
    const a = new nn.Sequential(layer(), new nn.Linear(16, 5));
    const b = nn.deepCopy(a);
    const criterion = new TokenCrossEntropy();
    const dp = dataParallel(b, { threads: 2, criterion, classes: [new URL("./fixtures/dp_model.ts", import.meta.url).href] });
    const optA = new optim.SGD(a.parameters(), { lr: 0.1, momentum: 0.9 });
    const optB = new optim.SGD(b.parameters(), { lr: 0.1, momentum: 0.9 });
    for (let step = 0; step < 3; step++) {
      const x = rt.randn([7, 6, 16]);
      const y = rt.randint(0, 5, [7, 6]);
      optA.zeroGrad();
      const refLoss = criterion.call(a.call(x) as Tensor, y) as Tensor;
      refLoss.backward();
      optA.step();
      optB.zeroGrad();
      const loss = dp.forwardLoss(x, y);
      assert.ok(Math.abs(loss.item() - refLoss.item()) <= 1e-5, `loss, step ${step}`);
      loss.backward();
      optB.step();
    }
    [...a.parameters()].forEach((p, i) => assert.ok(maxDiff([...b.parameters()][i]!, p) <= 1e-5, `parameter ${i}`));
    const x = rt.randn([5, 6, 16]);
    assert.ok(maxDiff(dp.call(x), a.call(x) as Tensor) <= 1e-5, "gathered output");
  });

  it("a model class of the user's own is rebuilt from the files named in classes; without them the error says what to do", () => {
    rt.manualSeed(3);
    const model = new ResidualMLP();
    const x = rt.randn([6, 6]);
    const y = rt.randn([6, 3]);
    const ref = referenceGrads(model, x, y);
    const dp = dataParallel(model, { threads: 2, classes: [new URL("./fixtures/dp_model.ts", import.meta.url).href] });
    nn.functional.mseLoss(dp.call(x), y).backward();
    [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-5, `grad ${i}`));

    const unknown = dataParallel(new ResidualMLP(), { threads: 2 });
    assert.throws(() => unknown.call(x), /replica 1 failed in its start-up: DataParallel: the worker thread does not know the module class ResidualMLP; export it from a file and name that file in DataParallel's classes option/);
  });

  it("batches that grow and shrink between calls (the pieces' buffers grow), an integer input, and module.to() after construction match one thread", () => {
    rt.manualSeed(4);
    const model = new nn.Sequential(new nn.Embedding(11, 5), new nn.Linear(5, 2));
    const dp = dataParallel(model, { threads: 2 });
    for (const n of [3, 40, 7, 64]) {
      const x = rt.randint(0, 11, [n, 4]);
      const y = rt.randn([n, 4, 2]);
      const ref = referenceGrads(model, x, y);
      const out = dp.call(x);
      nn.functional.mseLoss(out, y).backward();
      assert.ok(maxDiff(out, ref.out) <= 1e-6, `output, batch ${n}`);
      [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-5, `grad ${i}, batch ${n}`));
      model.zeroGrad();
    }
    // module.to() puts new memory under the parameters: the replica is rebuilt over it, with gradient buffers of the new dtype.
    model.to("float64");
    const x = rt.randint(0, 11, [9, 4]);
    const y = rt.randn([9, 4, 2], { dtype: "float64" });
    const ref = referenceGrads(model, x, y);
    nn.functional.mseLoss(dp.call(x), y).backward();
    [...model.parameters()].forEach((p, i) => {
      assert.equal(p.grad!.dtype, "float64");
      assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-12, `grad ${i} after module.to("float64")`);
    });
  });

  it("the gather: outputs whose first dim is not the batch's (flattened to rows) are concatenated as cat() does, with one thread's output and gradients", () => {
    rt.manualSeed(6);
    const model = new nn.Sequential(new nn.Linear(5, 4), new nn.Flatten({ startDim: 0, endDim: 1 }), new nn.Linear(4, 2));
    const dp = dataParallel(model, { threads: 2 });
    const x = rt.randn([7, 3, 5]);
    const y = rt.randn([21, 2]);
    const ref = referenceGrads(model, x, y);
    const out = dp.call(x);
    assert.deepEqual(out.shape, [21, 2]);
    nn.functional.mseLoss(out, y).backward();
    assert.ok(maxDiff(out, ref.out) <= 1e-6, "output");
    [...model.parameters()].forEach((p, i) => assert.ok(maxDiff(p.grad!, ref.grads[i]!) <= 1e-5, `grad ${i}`));
    model.zeroGrad();
  });

  it("profile: per-thread CPU and per-phase wall time over the calls since resetProfile()", () => {
    rt.manualSeed(5);
    const model = new nn.Sequential(new nn.Linear(6, 8), new nn.Tanh(), new nn.Linear(8, 3));
    const dp = dataParallel(model, { threads: 2, profile: true });
    const x = rt.randn([8, 6]);
    nn.functional.mseLoss(dp.call(x), rt.randn([8, 3])).backward();
    dp.resetProfile();
    for (let i = 0; i < 3; i++) nn.functional.mseLoss(dp.call(x), rt.randn([8, 3])).backward();
    const p = dp.profile();
    assert.equal(p.calls, 3);
    assert.deepEqual(Object.keys(p.main.wallMs), ["scatter", "forward", "waitForward", "gather", "sendGrad", "waitBackward", "sumWhileWaiting", "sumGrads", "betweenCalls"]);
    assert.equal(p.workers.length, 1);
    assert.deepEqual(Object.keys(p.workers[0]!.wallMs), ["forward", "copyOutput", "backward", "idleForMainBackward", "idleBeforeForward", "idleBeforeBackward"]);
    // Each replica did work on each call: its forward and backward took time, on its own thread.
    assert.ok(p.workers[0]!.wallMs.forward > 0 && p.workers[0]!.wallMs.backward > 0);
    assert.ok(p.main.wallMs.forward > 0);
    for (const t of [p.main, p.workers[0]!]) {
      for (const v of [...Object.values(t.wallMs), t.cpuMs, t.runDelayMs, t.wakeMs, t.spinMs, t.scavenges]) assert.ok(Number.isFinite(v) && v >= 0, JSON.stringify(t));
    }
  });

  it("refuses what it cannot do, saying why", () => {
    const model = new nn.Linear(4, 2);
    assert.throws(() => new nn.DataParallel(model, { threads: 0 }), /threads must be an integer in 1\.\.64, got 0/);
    assert.throws(() => new nn.DataParallel(model, { thread: 2 } as never), /unknown option "thread"; did you mean threads\?/);
    const dp = dataParallel(model, { threads: 2 });
    assert.throws(() => dp.call(rt.randn([3, 4], { requiresGrad: true })), /an input that requires grad is not supported/);
    const odd = new nn.Linear(4, 2) as rt.nn.Linear & { scale?: (x: Tensor) => Tensor };
    odd.scale = (x: Tensor) => x.mul(2);
    assert.throws(() => new nn.DataParallel(odd, { threads: 2 }), /module\.scale holds a function \(anonymous\) that a worker thread cannot rebuild/);
    assert.throws(() => dp.profile(), /profile\(\) needs the profile option/);
    assert.throws(() => dp.forwardLoss(rt.randn([3, 4]), rt.randn([3, 2])), /forwardLoss needs the criterion option/);
    assert.throws(() => new nn.DataParallel(model, { criterion: new nn.MSELoss({ reduction: "none" }) }), /the criterion's reduction must be "mean" or "sum".*got "none"/);
    const withLoss = dataParallel(model, { threads: 2, criterion: new nn.MSELoss() });
    // The criterion is not a child module: the state dict is the module's alone, as without one.
    const weighted = dataParallel(model, { threads: 1, criterion: new nn.CrossEntropyLoss({ weight: rt.ones([2]) }) });
    assert.deepEqual(Object.keys(weighted.stateDict()), ["module.weight", "module.bias"]);
    assert.throws(() => withLoss.forwardLoss(rt.randn([3, 4]), rt.randn([2, 2])), /target must have the input's batch size along dim 0 \(3\), got shape \[2, 2\]/);
    // A replica keeps one graph: the backward of an earlier call after a later call is refused.
    const x = rt.randn([4, 4]);
    const early = dp.call(x);
    dp.call(x);
    assert.throws(() => early.sum().backward(), /backward through the output of call \d+, but replica 1 already ran call \d+; run each call's backward before the next call/);
  });
});
