// The layers added for issue 15 against PyTorch 2.13 (test/fixtures/nn/layers_issue15.json,
// written by tools/nn/gen_issue15_layer_fixtures.py): MultiheadAttention with kdim/vdim, Flatten,
// Unflatten, and ParameterList/ParameterDict's state-dict names.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { mul, sum, zeros } from "../../src/ops/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashTensor } from "./det.js";
import { assertClose, readFixture, type Encoded } from "./fixture.js";

interface Case {
  name: string;
  module: string;
  config: Record<string, never>;
  stateDict: [string, number[]][];
  inputs: { hash: number; shape: number[] }[];
  outputs: Encoded[];
  inputGrads: Encoded[];
  paramGrads: Record<string, Encoded>;
}
const fixture = readFixture<{ cases: Case[]; structures: Record<string, [string, number[]][]> }>("layers_issue15.json");

function build(c: Case): nn.Module {
  const k = c.config;
  if (c.module === "MultiheadAttention") return new nn.MultiheadAttention(k.embed, k.heads, { kdim: k.kdim, vdim: k.vdim, batchFirst: k.batchFirst ?? false, bias: k.bias ?? true });
  if (c.module === "Flatten") return new nn.Flatten({ startDim: k.startDim, endDim: k.endDim });
  return new nn.Unflatten(k.dim, k.sizes);
}

describe("issue 15 layers against PyTorch", () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      const m = build(c);
      assert.deepEqual(Object.entries(m.stateDict()).map(([n, t]) => [n, [...t.shape]]), c.stateDict, "state dict names and shapes match PyTorch's");
      detInit(m);
      const xs = c.inputs.map((s) => hashTensor(s.shape, s.hash).requiresGrad_());
      let outs: Tensor[];
      if (m instanceof nn.MultiheadAttention) {
        const [o, w] = m.call(xs[0], xs[1], xs[2], { averageAttnWeights: c.name !== "mha_kdim_seq_first_no_bias" });
        outs = [o, w!];
      } else outs = [m.call(xs[0]) as Tensor];
      outs.forEach((o, j) => assertClose(o, c.outputs[j], `${c.name} output ${j}`));
      outs.map((o, j) => sum(mul(o, hashTensor(o.shape, 900 + j)))).reduce((a, b) => a.add(b)).backward();
      c.inputGrads.forEach((g, j) => assertClose(xs[j].grad, g, `${c.name} grad of input ${j}`));
      const params = new Map(m.namedParameters());
      for (const [name, g] of Object.entries(c.paramGrads)) assertClose(params.get(name)?.grad, g, `${c.name} grad of ${name}`);
    });
  }

  it("ParameterList and ParameterDict register their parameters under PyTorch's names", () => {
    class WithParams extends nn.Module {
      plist = new nn.ParameterList([zeros([2]), new nn.Parameter(zeros([3, 1]))]);
      pdict = new nn.ParameterDict({ alpha: zeros([1]), beta: zeros([2, 2]) });
    }
    const m = new WithParams();
    assert.deepEqual(Object.entries(m.stateDict()).map(([n, t]) => [n, [...t.shape]]), fixture.structures.WithParams);
    assert.equal(m.parameters().length, 4);
    assert.ok(m.plist.get(0) instanceof nn.Parameter, "a plain tensor becomes a Parameter");
    m.plist.append(zeros([5]));
    m.pdict.set("gamma", zeros([1]));
    assert.deepEqual(Object.keys(m.stateDict()), ["plist.0", "plist.1", "plist.2", "pdict.alpha", "pdict.beta", "pdict.gamma"]);
    const copy = nn.deepCopy(m);
    assert.notEqual(copy.pdict.get("alpha"), m.pdict.get("alpha"));
    assert.equal(copy.parameters().length, 6);
    m.to("float64");
    assert.equal(m.pdict.get("beta").dtype, "float64");
    assert.throws(() => m.pdict.set("a.b", zeros([1])), /without "\."/);
    assert.throws(() => m.plist.append(3 as never), /expected a Parameter or a Tensor/);
  });

  it("MultiheadAttention with kdim checks the key's feature size", () => {
    const m = new nn.MultiheadAttention(6, 2, { kdim: 4, vdim: 5, batchFirst: true });
    assert.equal(m.in_proj_weight, null);
    assert.throws(() => m.call(zeros([1, 2, 6]), zeros([1, 3, 6]), zeros([1, 3, 5])), /key must be \[batch, seq, kdim\] with kdim = 4, got \[1, 3, 6\]/);
    assert.throws(() => new nn.Flatten(1 as never), /Flatten: options must be an object/);
  });
});
