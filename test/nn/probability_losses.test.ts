// nn.NLLLoss, nn.BCELoss and nn.BCEWithLogitsLoss against the PyTorch values of the functional
// fixtures, their buffers, and their option checks.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { loadFixture, num, toTensor, type FixtureCase } from "../ops/fixture_harness.js";

function fixture(op: string, name: string): FixtureCase {
  const c = loadFixture(op).find((k) => k.name === name);
  assert.ok(c, `fixture ${op}/${name} exists`);
  return c;
}

function assertValue(t: rt.Tensor, expected: FixtureCase["outputs"][number], what: string): void {
  const a = Array.from(t.data() as ArrayLike<number>);
  const e = expected.data.map(num);
  assert.deepEqual([...t.shape], expected.shape, `${what}: shape`);
  e.forEach((v, i) => assert.ok(Math.abs(a[i] - v) <= 1e-5 + 1e-5 * Math.abs(v), `${what}: element ${i} is ${a[i]}, PyTorch gives ${v}`));
}

describe("probability losses as modules", () => {
  it("NLLLoss with a weight buffer and ignoreIndex matches PyTorch", () => {
    const c = fixture("nll_loss", "ignore_index_weight");
    const loss = new rt.nn.NLLLoss({ weight: toTensor(c.inputs.weight), ignoreIndex: 2 });
    assertValue(loss.forward(toTensor(c.inputs.input), toTensor(c.inputs.target)), c.outputs[0], "NLLLoss");
    assert.ok(Object.keys(loss.stateDict()).includes("weight"));
  });

  it("BCELoss with reduction none matches PyTorch", () => {
    const c = fixture("binary_cross_entropy", "none");
    const loss = new rt.nn.BCELoss({ reduction: "none" });
    assertValue(loss.forward(toTensor(c.inputs.input), toTensor(c.inputs.target)), c.outputs[0], "BCELoss");
  });

  it("BCEWithLogitsLoss with weight and posWeight matches PyTorch and trains", () => {
    const c = fixture("binary_cross_entropy_with_logits", "weight_pos_weight");
    const loss = new rt.nn.BCEWithLogitsLoss({ weight: toTensor(c.inputs.weight), posWeight: toTensor(c.inputs.pos_weight) });
    const input = toTensor(c.inputs.input, true);
    const value = loss.forward(input, toTensor(c.inputs.target));
    assertValue(value, c.outputs[0], "BCEWithLogitsLoss");
    value.backward();
    assert.ok(input.grad, "the input gets a gradient");
  });

  it("reject unknown and snake_case options", () => {
    assert.throws(() => new rt.nn.NLLLoss({ ignore_index: 0 } as never), /NLLLoss: unknown option "ignore_index"; did you mean ignoreIndex\?/);
    assert.throws(() => new rt.nn.BCEWithLogitsLoss({ pos_weight: rt.ones([2]) } as never), /did you mean posWeight\?/);
    assert.throws(() => new rt.nn.BCELoss({ reduction: "avg" } as never), /reduction must be "mean", "sum" or "none"/);
  });
});
