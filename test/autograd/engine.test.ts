import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { assertClose } from "../helpers.js";

test("gradients of a small expression match the hand-derived formula", () => {
  // f = Σ relu(a·b + 1), so df/da = b where a·b+1 > 0, and df/db = Σ_rows a there.
  const a = rt.tensor([[1, -2, 3], [4, 5, -6]], { requiresGrad: true });
  const b = rt.tensor([10, 20, 30], { requiresGrad: true });
  a.mul(b).add(1).relu().sum().backward();
  assertClose(a.grad!, [[10, 0, 30], [10, 20, 0]]);
  assertClose(b.grad!, [5, 5, 3]);
});

test("gradients accumulate across backward calls and zero when cleared", () => {
  const w = rt.tensor([1, 2, 3], { requiresGrad: true });
  w.mul(2).sum().backward();
  w.mul(3).sum().backward();
  assertClose(w.grad!, [5, 5, 5]);
  w.grad = null;
  w.square().sum().backward();
  assertClose(w.grad!, [2, 4, 6]);
});

test("a second backward through a freed graph is a clear error, retainGraph allows it", () => {
  const x = rt.tensor([1, 2], { requiresGrad: true });
  const y = x.exp().sum();
  y.backward({ retainGraph: true });
  y.backward();
  assertClose(x.grad!, [2 * Math.E, 2 * Math.exp(2)], 1e-5, 1e-6);
  assert.throws(() => y.backward(), /backward through the graph a second time/);
});

test("backward on a non-scalar without a gradient names the shape", () => {
  const x = rt.tensor([1, 2], { requiresGrad: true });
  assert.throws(() => x.mul(2).backward(), /implicitly only for scalar outputs.*\[2\]/);
  x.mul(2).backward(rt.tensor([1, 1]));
  assertClose(x.grad!, [2, 2]);
});

test("post-accumulate-grad hooks fire during backward, in reverse order of use", () => {
  // A chain of layers: the last one used gets its gradient first.
  const params = [0, 1, 2, 3].map(() => rt.randn([4, 4], { requiresGrad: true }));
  const fired: number[] = [];
  params.forEach((p, i) => p.registerPostAccumulateGradHook((t) => {
    assert.ok(t.grad, "the hook sees the accumulated gradient");
    fired.push(i);
  }));
  let h = rt.randn([2, 4]);
  for (const p of params) h = h.matmul(p).tanh();
  const loss = h.sum();
  loss.backward();
  assert.deepEqual(fired, [3, 2, 1, 0]);
});

test("post-accumulate hooks interleave with the backward of earlier layers", () => {
  const w1 = rt.randn([3, 3], { requiresGrad: true });
  const w2 = rt.randn([3, 3], { requiresGrad: true });
  const events: string[] = [];
  w2.registerPostAccumulateGradHook(() => events.push("w2 ready"));
  w1.registerPostAccumulateGradHook(() => events.push("w1 ready"));
  const h1 = rt.randn([2, 3]).matmul(w1);
  h1.registerHook(() => events.push("grad reaches h1"));
  h1.relu().matmul(w2).sum().backward();
  assert.deepEqual(events, ["w2 ready", "grad reaches h1", "w1 ready"]);
});

test("tensor hooks can replace the gradient; removing a hook stops it", () => {
  const x = rt.tensor([1, 2, 3], { requiresGrad: true });
  const handle = x.registerHook((g) => g.mul(10));
  x.sum().backward();
  assertClose(x.grad!, [10, 10, 10]);
  handle.remove();
  x.grad = null;
  x.sum().backward();
  assertClose(x.grad!, [1, 1, 1]);
});

test("retainGrad keeps the gradient of a non-leaf", () => {
  const x = rt.tensor([1, 2], { requiresGrad: true });
  const y = x.mul(3);
  y.retainGrad();
  y.square().sum().backward();
  assertClose(y.grad!, [6, 12]);
  assertClose(x.grad!, [18, 36]);
});

test("autograd.grad returns gradients without touching .grad, and supports double backward", () => {
  const x = rt.tensor([1, 2, 3], { dtype: "float64", requiresGrad: true });
  const y = x.pow(3).sum();
  const [g] = rt.autograd.grad(y, x, null, { createGraph: true });
  assertClose(g!, [3, 12, 27]);
  assert.equal(x.grad, null);
  const [gg] = rt.autograd.grad(g!.sum(), x);
  assertClose(gg!, [6, 12, 18]);
});

test("autograd.grad reports unused inputs unless allowed", () => {
  const x = rt.tensor([1], { requiresGrad: true });
  const unused = rt.tensor([1], { requiresGrad: true });
  assert.throws(() => rt.autograd.grad(x.mul(2).sum(), [x, unused]), /input 1 .* was not used/);
  const [, none] = rt.autograd.grad(x.mul(2).sum(), [x, unused], null, { allowUnused: true });
  assert.equal(none, null);
});

test("noGrad records nothing and detach leaves the graph", () => {
  const x = rt.tensor([1, 2], { requiresGrad: true });
  const y = rt.noGrad(() => x.mul(2));
  assert.equal(y.requiresGrad, false);
  assert.equal(y.gradFn, null);
  const d = x.mul(2).detach();
  assert.equal(d.requiresGrad, false);
  assert.equal(rt.isGradEnabled(), true);
});

test("modifying a saved tensor in place before backward is detected", () => {
  const x = rt.tensor([1, 2], { requiresGrad: true });
  const saved = rt.tensor([3, 4]);
  const y = x.mul(saved).sum();
  saved.add_(1);
  assert.throws(() => y.backward(), /modified by an in-place op/);
});

test("in-place ops on tensors that require grad are refused outside noGrad", () => {
  const w = rt.tensor([1, 2], { requiresGrad: true });
  assert.throws(() => w.add_(1), /in-place op on a tensor that requires grad/);
  rt.noGrad(() => w.add_(1));
  assertClose(w, [2, 3]);
});

test("a leaf used twice receives the sum of both paths, and no gradient aliases another", () => {
  const a = rt.tensor([1, 2], { requiresGrad: true });
  const b = rt.tensor([3, 4], { requiresGrad: true });
  const s = a.add(b);
  s.sum().backward();
  assert.notEqual(a.grad!.storage, b.grad!.storage);
  rt.noGrad(() => a.grad!.add_(100));
  assertClose(b.grad!, [1, 1]);
  const c = rt.tensor([2], { requiresGrad: true });
  c.mul(c).add(c).sum().backward();
  assertClose(c.grad!, [5]);
});

test("gradcheck agrees with finite differences for a composite function", () => {
  const x = rt.randn([3, 4], { dtype: "float64", requiresGrad: true });
  const w = rt.randn([5, 4], { dtype: "float64", requiresGrad: true });
  const b = rt.randn([5], { dtype: "float64", requiresGrad: true });
  assert.equal(rt.autograd.gradcheck((x, w, b) => x.linear(w, b).tanh().mul(x.sum(1, true)), [x, w, b]), true);
});

test("gradcheck catches a wrong gradient", () => {
  const x = rt.randn([3], { dtype: "float64", requiresGrad: true });
  const wrong = (t: rt.Tensor) => {
    const y = t.mul(2);
    if (y.requiresGrad) y.registerHook((g) => g.mul(1.5));
    return y;
  };
  assert.throws(() => rt.autograd.gradcheck(wrong, [x]), /by finite differences/);
});

test("queueCallback runs once after every node of the backward, and only during backward", () => {
  const w = rt.tensor([1, 2], { requiresGrad: true });
  const v = rt.tensor([3, 4], { requiresGrad: true });
  const events: string[] = [];
  w.registerPostAccumulateGradHook(() => {
    events.push("w");
    rt.autograd.queueCallback(() => events.push(`final sees v.grad=${v.grad !== null}`));
  });
  v.registerPostAccumulateGradHook(() => events.push("v"));
  w.mul(v).sum().backward();
  assert.deepEqual(events.slice(-1), ["final sees v.grad=true"]);
  assert.equal(events.length, 3);
  assert.throws(() => rt.autograd.queueCallback(() => {}), /only be called while a backward pass is running/);
});
