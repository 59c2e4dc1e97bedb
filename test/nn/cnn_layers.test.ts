// Conv1d/Conv2d, MaxPool2d/AvgPool2d/AdaptiveAvgPool2d, BatchNorm1d/2d and GroupNorm against
// PyTorch 2.13 (test/fixtures/nn/cnn_layers.json, written by tools/nn/gen_cnn_fixtures.py): outputs,
// input and parameter gradients, state-dict names, running statistics and eval-mode outputs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { mul, sum } from "../../src/ops/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashTensor } from "./det.js";
import { assertClose, readFixture, type Encoded } from "./fixture.js";

interface Input {
  shape: number[];
  hash: number;
  scale?: number;
  base?: number;
}
interface Case {
  name: string;
  module: string;
  config: { args: unknown[] } & Record<string, unknown>;
  input: Input;
  stateDict: [string, number[]][];
  outputs: Encoded[];
  inputGrad: Encoded;
  paramGrads: Record<string, Encoded>;
  steps?: number;
  buffers?: Record<string, Encoded>;
  evalInput?: Input;
  evalOutput?: Encoded;
}

const fixture = readFixture<{ cases: Case[] }>("cnn_layers.json");
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The layer a porter writes for the PyTorch call: same positionals, keywords as camelCase options. */
function build(c: Case): nn.Module {
  const options = Object.fromEntries(Object.entries(c.config).filter(([k]) => k !== "args").map(([k, v]) => [camel(k), v]));
  const Ctor = (nn as unknown as Record<string, new (...args: unknown[]) => nn.Module>)[c.module];
  const args = c.config.args;
  return Object.keys(options).length > 0 ? new Ctor(...args, options) : new Ctor(...args);
}

const input = (s: Input) => hashTensor(s.shape, s.hash, s.scale ?? 1, s.base ?? 0);

describe("CNN layers against PyTorch", () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      const m = build(c);
      assert.deepEqual(Object.entries(m.stateDict()).map(([n, t]) => [n, [...t.shape]]), c.stateDict, "state dict names and shapes match PyTorch's");
      detInit(m);
      const x = input(c.input).requiresGrad_();
      const out = m.call(x) as Tensor | [Tensor, Tensor];
      const outs = Array.isArray(out) ? out : [out];
      outs.forEach((o, j) => assertClose(o, c.outputs[j], `${c.name} output ${j}`));
      outs
        .filter((o) => o.dtype !== "int32")
        .map((o, j) => sum(mul(o, hashTensor(o.shape, 900 + j))))
        .reduce((a, b) => a.add(b))
        .backward();
      assertClose(x.grad, c.inputGrad, `${c.name} input gradient`);
      const params = new Map(m.namedParameters());
      assert.deepEqual([...params.keys()].filter((n) => params.get(n)!.grad).sort(), Object.keys(c.paramGrads).sort());
      for (const [name, g] of Object.entries(c.paramGrads)) assertClose(params.get(name)?.grad, g, `${c.name} gradient of ${name}`);
      if (c.buffers) {
        for (let s = 0; s < (c.steps ?? 0); s++) m.call(hashTensor(c.input.shape, 50 + s, c.input.scale ?? 1, c.input.base ?? 0));
        const buffers = new Map(m.namedBuffers());
        assert.deepEqual([...buffers.keys()].sort(), Object.keys(c.buffers).sort(), `${c.name} buffers`);
        for (const [name, b] of Object.entries(c.buffers)) assertClose(buffers.get(name), b, `${c.name} buffer ${name}`);
      }
      if (c.evalInput) {
        m.eval();
        assertClose(m.call(input(c.evalInput)) as Tensor, c.evalOutput!, `${c.name} eval output`);
      }
    });
  }
});
