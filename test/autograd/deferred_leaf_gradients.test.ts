import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { queueCallback, runBackward, runDeferredLeafGradients } from "../../src/autograd/engine.js";
import { assertClose } from "../helpers.js";

// The pipeline schedules' "input gradient first" pass: linear leaves its weight and bias gradients
// for after the pass, so that the input's gradient is final (and sent) sooner. The reference is the
// same model's ordinary backward.
const { nn } = rt;

function mlp(): rt.nn.Sequential {
  rt.manualSeed(3);
  return new nn.Sequential(new nn.Linear(6, 12), new nn.ReLU(), new nn.Linear(12, 12), new nn.Tanh(), new nn.Linear(12, 3));
}

function reference(x: rt.Tensor, g: rt.Tensor): { input: rt.Tensor; params: rt.Tensor[] } {
  const model = mlp();
  const xr = x.detach().clone().requiresGrad_(true);
  (model.call(xr) as rt.Tensor).backward(g);
  return { input: xr.grad!, params: model.parameters().map((p) => p.grad!) };
}

test("a pass deferring leaf gradients gives the input's gradient at once and the weights' after, equal to an ordinary backward", () => {
  const x = rt.randn([5, 6]);
  const g = rt.randn([5, 3]);
  const ref = reference(x, g);
  const model = mlp();
  const xi = x.detach().clone().requiresGrad_(true);
  const deferred: (() => void)[] = [];
  runBackward([model.call(xi) as rt.Tensor], [g], { deferredLeafGradients: deferred });
  assertClose(xi.grad!, ref.input.toArray() as number[][]);
  assert.ok(deferred.length >= 3, "at least one deferred computation per Linear");
  assert.ok(model.parameters().every((p) => p.grad === null), "no weight gradient before the deferred ones run");
  runDeferredLeafGradients(deferred);
  assert.equal(deferred.length, 0);
  model.parameters().forEach((p, i) => assert.deepEqual(p.grad!.toArray(), ref.params[i]!.toArray()));
  assert.equal(rt.isGradEnabled(), true, "grad mode is restored");
});

test("deferred gradients accumulate into .grad over several passes, as micro-batches do", () => {
  const xs = [rt.randn([4, 6]), rt.randn([3, 6])];
  const gs = [rt.randn([4, 3]), rt.randn([3, 3])];
  const whole = mlp();
  const split = mlp();
  for (let i = 0; i < 2; i++) {
    (whole.call(xs[i]!) as rt.Tensor).backward(gs[i]!);
    const deferred: (() => void)[] = [];
    runBackward([split.call(xs[i]!.clone().requiresGrad_(true)) as rt.Tensor], [gs[i]!], { deferredLeafGradients: deferred });
    runDeferredLeafGradients(deferred);
  }
  const ps = split.parameters();
  whole.parameters().forEach((p, i) => assertClose(ps[i]!.grad!, p.grad!.toArray() as number[], 1e-6, 1e-6));
});

test("a leaf with hooks gets its gradient inside the pass; a final callback sees every deferred gradient", () => {
  const model = mlp();
  const [w0] = model.parameters();
  const seen: string[] = [];
  w0!.registerPostAccumulateGradHook(() => seen.push("hook"));
  const last = model.get(4) as rt.nn.Linear;
  let atCallback: boolean | null = null;
  last.weight.registerHook(() => {
    queueCallback(() => (atCallback = model.parameters().every((p) => p.grad !== null)));
  });
  const deferred: (() => void)[] = [];
  runBackward([model.call(rt.randn([2, 6]).requiresGrad_(true)) as rt.Tensor], [rt.randn([2, 3])], { deferredLeafGradients: deferred });
  assert.deepEqual(seen, ["hook"], "the hooked weight's gradient arrived during the pass");
  assert.equal(atCallback, true, "the deferred gradients ran before the final callback");
  assert.equal(deferred.length, 0);
});

test("createGraph and a pass without the option compute every gradient in the pass", () => {
  const model = mlp();
  const deferred: (() => void)[] = [];
  runBackward([model.call(rt.randn([2, 6]).requiresGrad_(true)) as rt.Tensor], [rt.randn([2, 3])], { deferredLeafGradients: deferred, createGraph: true });
  assert.equal(deferred.length, 0);
  assert.ok(model.parameters().every((p) => p.grad !== null));
});
