// Inference tensors as PyTorch defines them: memory allocated under inferenceMode marks its tensors
// (isInference); outside the mode they cannot be saved for backward, updated in place, or made to
// require grad, while views of normal tensors stay normal and clone() gives a normal tensor.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as rt from "../../src/index.js";

test("tensors made under inferenceMode are inference tensors, with PyTorch's restrictions outside it", () => {
  const w = rt.randn([3, 2]).requiresGrad_();
  const normal = rt.randn([4, 3]);
  const [made, view] = rt.inferenceMode(() => {
    const t = rt.randn([4, 3]);
    t.add_(1); // in place inside the mode is fine
    return [t, normal.narrow(0, 0, 2)];
  });
  assert.equal(made.isInference(), true);
  assert.equal(view.isInference(), false, "a view of a normal tensor stays normal");
  assert.equal(normal.isInference(), false);
  assert.throws(() => made.matmul(w), /cannot be saved for backward, as in PyTorch; clone\(\) it/);
  assert.throws(() => made.add_(1), /in-place update to an inference tensor .* outside inferenceMode is not allowed/);
  assert.throws(() => made.requiresGrad_(), /setting requiresGrad on an inference tensor/);
  // Without a graph to record, an inference tensor is an ordinary operand.
  assert.equal(made.mul(2).isInference(), false);
  const copy = made.clone();
  assert.equal(copy.isInference(), false);
  copy.matmul(w).sum().backward();
  assert.deepEqual(w.grad!.shape, [3, 2]);
  assert.equal(rt.inferenceMode(false, () => rt.zeros([1])).isInference(), false);
});
