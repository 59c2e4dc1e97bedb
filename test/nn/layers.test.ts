// Every layer's forward and backward against PyTorch 1.13 (test/fixtures/nn/layers.json, written
// by tools/nn/gen_layer_fixtures.py), from identical deterministic weights and inputs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { mul, sum } from "../../src/ops/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashTensor } from "./det.js";
import { assertClose, decode, readFixture, type Encoded } from "./fixture.js";

type Input = { hash: number; shape: number[] } | Encoded;
interface Case {
  name: string;
  module: string;
  config: Record<string, unknown>;
  params: [string, number[]][];
  stateDict: [string, number[]][];
  inputs: Input[];
  call: Record<string, unknown>;
  outputs: Encoded[];
  inputGrads: (Encoded | null)[];
  paramGrads: Record<string, Encoded>;
}

const fixture = readFixture<{ cases: Case[] }>("layers.json");

function build(c: Case): nn.Module {
  const k = c.config as Record<string, never>;
  const layerOptions = { dimFeedforward: k.ff, dropout: 0, batchFirst: k.batchFirst ?? false, normFirst: k.normFirst ?? false, activation: k.activation ?? "relu" };
  switch (c.module) {
    case "Linear":
      return new nn.Linear(k.in, k.out, { bias: k.bias ?? true });
    case "Embedding":
      return new nn.Embedding(k.num, k.dim, { paddingIdx: k.paddingIdx });
    case "LayerNorm":
      return new nn.LayerNorm(k.shape, { eps: k.eps ?? 1e-5 });
    case "GELU":
      return new nn.GELU(k.approximate ?? "none");
    case "Tanh":
      return new nn.Tanh();
    case "ReLU":
      return new nn.ReLU();
    case "Softmax":
      return new nn.Softmax(k.dim);
    case "LogSoftmax":
      return new nn.LogSoftmax(k.dim);
    case "Sequential":
      return new nn.Sequential(new nn.Linear(4, 6), new nn.ReLU(), new nn.Linear(6, 2));
    case "MultiheadAttention":
      return new nn.MultiheadAttention(k.embed, k.heads, { batchFirst: k.batchFirst ?? false });
    case "TransformerEncoderLayer":
      return new nn.TransformerEncoderLayer(k.d, k.heads, layerOptions);
    case "TransformerDecoderLayer":
      return new nn.TransformerDecoderLayer(k.d, k.heads, layerOptions);
    case "TransformerEncoder":
      return new nn.TransformerEncoder(new nn.TransformerEncoderLayer(k.d, k.heads, layerOptions), k.layers, { norm: k.finalNorm ? new nn.LayerNorm(k.d) : null });
    case "Transformer":
      return new nn.Transformer({ dModel: k.d, nhead: k.heads, numEncoderLayers: k.enc, numDecoderLayers: k.dec, ...layerOptions });
    case "CrossEntropyLoss":
      return new nn.CrossEntropyLoss({ ignoreIndex: k.ignoreIndex, labelSmoothing: k.labelSmoothing, reduction: k.reduction });
    case "MSELoss":
      return new nn.MSELoss();
    default:
      throw new Error(`no builder for ${c.module}`);
  }
}

function run(c: Case, m: nn.Module, xs: Tensor[]): Tensor[] {
  const call = c.call as Record<string, Encoded | boolean | undefined>;
  const mask = (key: string) => (call[key] ? decode(call[key] as Encoded) : undefined);
  switch (c.module) {
    case "MultiheadAttention": {
      const [q, k, v] = xs.length === 1 ? [xs[0], xs[0], xs[0]] : xs.length === 2 ? [xs[0], xs[1], xs[1]] : xs;
      const [out, w] = (m as nn.MultiheadAttention).call(q, k, v, {
        attnMask: mask("attnMask"),
        keyPaddingMask: mask("keyPaddingMask"),
        needWeights: call.needWeights as boolean | undefined,
        averageAttnWeights: call.averageAttnWeights as boolean | undefined,
      });
      return w ? [out, w] : [out];
    }
    case "TransformerEncoderLayer":
      return [(m as nn.TransformerEncoderLayer).call(xs[0], { srcMask: mask("srcMask"), srcKeyPaddingMask: mask("srcKeyPaddingMask") })];
    case "TransformerDecoderLayer":
      return [(m as nn.TransformerDecoderLayer).call(xs[0], xs[1], { tgtMask: mask("tgtMask"), memoryKeyPaddingMask: mask("memoryKeyPaddingMask") })];
    case "TransformerEncoder":
      return [(m as nn.TransformerEncoder).call(xs[0], { mask: mask("mask") })];
    case "Transformer":
      return [(m as nn.Transformer).call(xs[0], xs[1], { tgtMask: mask("tgtMask") })];
    default:
      return [m.call(...xs) as Tensor];
  }
}

describe("layers against PyTorch", () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      const m = build(c);
      assert.deepEqual(
        Object.entries(m.stateDict()).map(([n, t]) => [n, [...t.shape]]),
        c.stateDict,
        "state dict names and shapes (in order) match PyTorch's",
      );
      detInit(m);
      const xs = c.inputs.map((spec) => ("hash" in spec ? hashTensor(spec.shape, spec.hash).requiresGrad_() : decode(spec)));
      const outs = run(c, m, xs);
      assert.equal(outs.length, c.outputs.length, "number of outputs");
      outs.forEach((o, j) => assertClose(o, c.outputs[j], `${c.name} output ${j}`));
      const loss = outs.map((o, j) => sum(mul(o, hashTensor(o.shape, 900 + j)))).reduce((a, b) => a.add(b));
      loss.backward();
      c.inputGrads.forEach((g, j) => {
        if (g) assertClose(xs[j].grad, g, `${c.name} grad of input ${j}`);
      });
      const params = new Map(m.namedParameters());
      for (const [name, g] of Object.entries(c.paramGrads)) assertClose(params.get(name)?.grad, g, `${c.name} grad of ${name}`);
    });
  }
});
