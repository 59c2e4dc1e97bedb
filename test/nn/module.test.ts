// Module mechanics: naming as PyTorch names the same structure, registration, modes, hooks,
// dtype casts, deep copies, and all-or-nothing loadStateDict.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { arange, ones, randn, tensor, zeros } from "../../src/ops/index.js";
import { manualSeed } from "../../src/tensor/random.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { readFixture } from "./fixture.js";
import { detInit } from "./det.js";

interface Structure {
  stateDict: [string, number[]][];
  parameters: string[];
  modules: string[];
}
const structures = readFixture<{ structures: Record<string, Structure> }>("layers.json").structures;

/** ../shared/peers/torch/gpt.py at small sizes, written as a ringtorch user would. */
class GPT extends nn.Module {
  tok: nn.Embedding;
  pos: nn.Embedding;
  blocks: nn.TransformerEncoder;
  ln: nn.LayerNorm;
  head: nn.Linear;
  declare mask: Tensor;

  constructor(V = 50, D = 16, H = 2, L = 2, readonly T = 8) {
    super();
    this.tok = new nn.Embedding(V, D);
    this.pos = new nn.Embedding(T, D);
    const layer = new nn.TransformerEncoderLayer(D, H, { dimFeedforward: 4 * D, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true });
    this.blocks = new nn.TransformerEncoder(layer, L);
    this.ln = new nn.LayerNorm(D);
    this.head = new nn.Linear(D, V, { bias: false });
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(T));
  }

  override forward(idx: Tensor): Tensor {
    const x = this.tok.call(idx).add(this.pos.call(arange(this.T)));
    return this.head.call(this.ln.call(this.blocks.call(x, { mask: this.mask })));
  }
}

const shapes = (m: nn.Module) => Object.entries(m.stateDict()).map(([n, t]) => [n, [...t.shape]]);

describe("names match PyTorch's for the same structure", () => {
  const models: Record<string, () => nn.Module> = {
    gpt: () => new GPT(),
    transformer: () => new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 1, dimFeedforward: 16 }),
    mlp: () => new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)),
  };
  for (const [name, make] of Object.entries(models)) {
    it(name, () => {
      const m = make();
      assert.deepEqual(shapes(m), structures[name].stateDict);
      assert.deepEqual([...m.namedParameters()].map(([n]) => n), structures[name].parameters);
      assert.deepEqual([...m.namedModules()].map(([n]) => n), structures[name].modules);
    });
  }
});

class Tied extends nn.Module {
  emb = new nn.Embedding(5, 3);
  head = new nn.Linear(3, 5, { bias: false });
  declare stats: Tensor;
  declare scratch: Tensor;
  constructor() {
    super();
    this.head.weight = this.emb.weight;
    this.registerBuffer("stats", zeros([2]));
    this.registerBuffer("scratch", ones([2]), false);
  }
}

describe("registration", () => {
  it("shared parameters appear once in parameters() and under both names in stateDict()", () => {
    const m = new Tied();
    assert.equal(m.parameters().length, 1);
    assert.deepEqual(Object.keys(m.stateDict()), ["stats", "emb.weight", "head.weight"]);
  });

  it("non-persistent buffers are buffers but stay out of the state dict", () => {
    const m = new Tied();
    assert.deepEqual([...m.namedBuffers()].map(([n]) => n), ["stats", "scratch"]);
    assert.ok(!("scratch" in m.stateDict()));
  });

  it("explicit registration, null members and reserved names", () => {
    const m = new nn.Module();
    m.registerParameter("w", new nn.Parameter(ones([2])));
    m.registerParameter("b", null);
    m.registerModule("sub", new nn.Linear(2, 2));
    assert.deepEqual(Object.keys(m.stateDict()), ["w", "sub.weight", "sub.bias"]);
    assert.throws(() => m.registerParameter("a.b", null), /without "\."/);
    assert.throws(() => m.registerModule("train", null), /Module method/);
    assert.throws(() => m.registerParameter("x", ones([1]) as never), /Parameter/);
  });

  it("containers number and name their members as PyTorch does", () => {
    const list = new nn.ModuleList([new nn.Linear(1, 1), new nn.Linear(1, 1)]);
    list.insert(0, new nn.Linear(2, 2));
    assert.equal(list.length, 3);
    assert.deepEqual(shapes(list).map(([n]) => n), ["0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"]);
    assert.equal(list.get(-1), list[2]);
    // Pairs keep their order even for integer-like names (an object literal would list "2" first).
    const dict = new nn.ModuleDict([["encoder", new nn.Linear(1, 1)], ["2", new nn.ReLU()], ["decoder", new nn.Linear(1, 1)]]);
    assert.deepEqual([...dict.keys()], ["encoder", "2", "decoder"]);
    assert.deepEqual(Object.keys(dict.stateDict()), ["encoder.weight", "encoder.bias", "decoder.weight", "decoder.bias"]);
    const named = new nn.Sequential({ fc: new nn.Linear(2, 3), act: new nn.ReLU() });
    assert.deepEqual(Object.keys(named.stateDict()), ["fc.weight", "fc.bias"]);
  });
});

describe("modes, gradients and casts", () => {
  it("train()/eval() reach every submodule and switch dropout off", () => {
    const m = new nn.Sequential(new nn.Linear(4, 4), new nn.Dropout(0.5));
    m.eval();
    assert.ok([...m.modules()].every((x) => !x.training));
    const x = randn([3, 4]);
    assert.deepEqual(m.call(x).toArray(), m.get(0).call(x).toArray());
    m.train();
    assert.ok([...m.modules()].every((x) => x.training));
  });

  it("zeroGrad drops gradients, or zeroes them in place", () => {
    const m = new nn.Linear(3, 2);
    m.call(randn([4, 3])).sum().backward();
    const g = m.weight.grad!;
    m.zeroGrad(false);
    assert.equal(m.weight.grad, g);
    assert.ok((g.toArray() as number[][]).flat().every((v) => v === 0));
    m.zeroGrad();
    assert.equal(m.weight.grad, null);
  });

  it("apply visits children before the parent", () => {
    const order: string[] = [];
    new nn.Sequential(new nn.Linear(1, 1), new nn.Sequential(new nn.ReLU())).apply((mod) => order.push(mod.constructor.name));
    assert.deepEqual(order, ["Linear", "ReLU", "Sequential", "Sequential"]);
  });

  it("to(float64) casts in place, keeping the Parameter objects", () => {
    const m = new nn.Linear(3, 2);
    const w = m.weight;
    const before = w.toArray();
    m.to("float64");
    assert.equal(m.weight, w);
    assert.equal(w.dtype, "float64");
    assert.deepEqual(w.toArray(), before);
    assert.equal(m.call(randn([2, 3], { dtype: "float64" })).dtype, "float64");
  });

  it("deepCopy gives independent tensors with equal values", () => {
    const a = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
    const b = nn.deepCopy(a);
    assert.deepEqual(shapes(a), shapes(b));
    assert.notEqual(a.self_attn.in_proj_weight, b.self_attn.in_proj_weight);
    assert.deepEqual(b.linear1.weight.toArray(), a.linear1.weight.toArray());
    b.linear1.weight.detach().fill_(0);
    assert.notDeepEqual(a.linear1.weight.toArray(), b.linear1.weight.toArray());
  });

  it("layers of a TransformerEncoder start identical, as PyTorch's deep copies do", () => {
    const enc = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }), 2);
    assert.deepEqual(enc.layers[0].linear1.weight.toArray(), enc.layers[1].linear1.weight.toArray());
  });
});

describe("forward hooks", () => {
  it("a pre-hook can replace the input, a hook the output, and both can be removed", () => {
    const m = new nn.Linear(2, 2);
    const seen: number[][] = [];
    const pre = m.registerForwardPreHook((_mod, [x]) => [x.mul(0)]);
    const post = m.registerForwardHook((_mod, _args, out) => {
      seen.push([...(out as Tensor).shape]);
      return (out as Tensor).add(1);
    });
    const y = m.call(ones([1, 2]));
    assert.deepEqual(y.toArray(), [m.bias!.add(1).toArray()]);
    assert.deepEqual(seen, [[1, 2]]);
    pre.remove();
    post.remove();
    assert.deepEqual(m.call(ones([1, 2])).toArray(), m.forward(ones([1, 2])).toArray());
    assert.equal(seen.length, 1);
  });
});

describe("loadStateDict", () => {
  it("round-trips values between two models of one structure", () => {
    const a = detInit(new GPT());
    const b = new GPT();
    b.loadStateDict(a.stateDict());
    const idx = tensor(Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]), { shape: [2, 8] });
    assert.deepEqual(b.call(idx).toArray(), a.call(idx).toArray());
  });

  it("a state dict of another model is refused with every problem named, and nothing is loaded", () => {
    const target = new nn.Sequential(new nn.Linear(4, 3), new nn.ReLU(), new nn.Linear(3, 2));
    const before = JSON.stringify(Object.values(target.stateDict()).map((t) => t.toArray()));
    const other = new nn.Sequential(new nn.Linear(4, 5), new nn.ReLU(), new nn.Linear(5, 2), new nn.Linear(2, 2));
    assert.throws(
      () => target.loadStateDict(other.stateDict()),
      (err: Error) =>
        /Unexpected key\(s\).*"3\.weight"/.test(err.message) &&
        /size mismatch for "0\.weight": the state dict has shape \[5, 4\], the model has \[3, 4\]/.test(err.message) &&
        /nothing was loaded/.test(err.message),
    );
    assert.equal(JSON.stringify(Object.values(target.stateDict()).map((t) => t.toArray())), before);
  });

  it("missing keys are an error when strict, and reported otherwise", () => {
    const m = new nn.Sequential(new nn.Linear(2, 2), new nn.Linear(2, 2));
    const partial = { "0.weight": ones([2, 2]), "0.bias": zeros([2]), extra: zeros([1]) };
    assert.throws(() => m.loadStateDict(partial), /Missing key\(s\) in state dict: "1\.weight", "1\.bias"/);
    assert.notDeepEqual(m.get(0).stateDict().weight.toArray(), [[1, 1], [1, 1]]);
    const result = m.loadStateDict(partial, false);
    assert.deepEqual(result, { missingKeys: ["1.weight", "1.bias"], unexpectedKeys: ["extra"] });
    assert.deepEqual((m.get(0) as nn.Linear).weight.toArray(), [[1, 1], [1, 1]]);
  });

  it("a shape mismatch is an error even when not strict", () => {
    const m = new nn.Linear(2, 2);
    assert.throws(() => m.loadStateDict({ weight: ones([3, 2]), bias: zeros([2]) }, false), /size mismatch for "weight"/);
  });
});

describe("default initialisations match PyTorch's distributions", () => {
  const pt = readFixture<{ init: Record<string, { min: number; max: number; mean: number; std: number }> }>("layers.json").init;
  const stats = (t: Tensor) => {
    const v = Array.from(t.to("float64").contiguous().data());
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, v.length - 1));
    return { min: Math.min(...v), max: Math.max(...v), mean, std };
  };
  manualSeed(0);
  const lin = new nn.Linear(300, 200);
  const mha = new nn.MultiheadAttention(64, 4);
  const emb = new nn.Embedding(1000, 64, { paddingIdx: 3 });
  const ln = new nn.LayerNorm(32);
  const ours: Record<string, Tensor> = {
    "Linear(300,200).weight": lin.weight,
    "Linear(300,200).bias": lin.bias!,
    "MultiheadAttention(64,4).in_proj_weight": mha.in_proj_weight!,
    "MultiheadAttention(64,4).in_proj_bias": mha.in_proj_bias!,
    "MultiheadAttention(64,4).out_proj.weight": mha.out_proj.weight,
    "MultiheadAttention(64,4).out_proj.bias": mha.out_proj.bias!,
    "Embedding(1000,64,padding_idx=3).weight": emb.weight,
    "Embedding(1000,64,padding_idx=3).weight[3]": emb.weight.select(0, 3),
    "LayerNorm(32).weight": ln.weight!,
    "LayerNorm(32).bias": ln.bias!,
  };
  for (const [name, t] of Object.entries(ours)) {
    it(name, () => {
      const a = stats(t);
      const e = pt[name];
      // Uniform bounds within 2% of the range (a normal's extremes are too noisy to compare),
      // moments within a few standard errors of the difference of two samples of this size.
      if (!name.startsWith("Embedding(1000,64,padding_idx=3).weight") || name.endsWith("[3]")) {
        const span = Math.max(e.max - e.min, 1e-12);
        assert.ok(Math.abs(a.min - e.min) <= 0.02 * span + 1e-12, `min ${a.min} vs PyTorch ${e.min}`);
        assert.ok(Math.abs(a.max - e.max) <= 0.02 * span + 1e-12, `max ${a.max} vs PyTorch ${e.max}`);
      }
      const n = t.numel;
      assert.ok(Math.abs(a.std - e.std) <= (4 / Math.sqrt(n)) * e.std + 1e-12, `std ${a.std} vs PyTorch ${e.std}`);
      assert.ok(Math.abs(a.mean - e.mean) <= (6 / Math.sqrt(n)) * e.std + 1e-12, `mean ${a.mean} vs PyTorch ${e.mean}`);
    });
  }
});
