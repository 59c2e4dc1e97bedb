// Training equivalence with PyTorch 1.13 (test/fixtures/nn/training.json, written by
// tools/nn/gen_training_fixtures.py): the same models from the same weights on the same batches
// give the same losses, within 1e-4 relative, for 20 steps.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { arange, crossEntropy, zeros } from "../../src/ops/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashLabels, hashTensor } from "./det.js";
import { readFixture } from "./fixture.js";

const fixture = readFixture<{ mlp: { losses: number[] }; encoder_lm: { losses: number[]; gradNorms: number[] } }>("training.json");

function assertSeries(actual: number[], expected: number[], what: string, rtol = 1e-4): void {
  expected.forEach((e, i) => assert.ok(Math.abs(actual[i] - e) <= rtol * Math.abs(e), `${what} at step ${i}: ${actual[i]}, PyTorch has ${e} (relative error ${Math.abs(actual[i] - e) / Math.abs(e)})`));
}

const V = 64, D = 32, H = 4, FF = 64, T = 16, B = 4;

class EncoderLM extends nn.Module {
  tok = new nn.Embedding(V, D);
  pos = new nn.Embedding(T, D);
  encoder = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(D, H, { dimFeedforward: FF, dropout: 0, batchFirst: true }), 2);
  ln = new nn.LayerNorm(D);
  head = new nn.Linear(D, V);
  readonly mask = nn.generateSquareSubsequentMask(T);

  override forward(idx: Tensor, pad: Tensor): Tensor {
    const x = this.tok.call(idx).add(this.pos.call(arange(T)));
    return this.head.call(this.ln.call(this.encoder.call(x, { mask: this.mask, srcKeyPaddingMask: pad })));
  }
}

/** tools/nn/gen_training_fixtures.py's lm_batch. */
function lmBatch(s: number): [Tensor, Tensor, Tensor] {
  const tokens = hashLabels([B, T + 1], 30000 + s, V);
  const idx = tokens.narrow(1, 0, T).contiguous();
  const tgt = tokens.narrow(1, 1, T).contiguous();
  const pad = zeros([B, T], { dtype: "bool" });
  const padData = pad.data();
  const tgtData = tgt.data();
  for (let t = T - 3; t < T; t++) {
    padData[t] = 1;
    tgtData[t] = -100;
  }
  return [idx, tgt, pad];
}

describe("training equivalence with PyTorch", () => {
  it("MLP 784-1024-1024-10 with Adam, batch 64: 20 losses within 1e-4 relative", () => {
    const model = detInit(new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)));
    const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
    const lossFn = new nn.CrossEntropyLoss();
    const losses: number[] = [];
    for (let s = 0; s < 20; s++) {
      const b = s % 4;
      opt.zeroGrad();
      const loss = lossFn.call(model.call(hashTensor([64, 784], 10000 + b)), hashLabels([64], 20000 + b, 10));
      loss.backward();
      opt.step();
      losses.push(loss.item());
    }
    assertSeries(losses, fixture.mlp.losses, "MLP loss");
  });

  it("2-layer Transformer encoder LM with AdamW, clipping and warmup-cosine: 20 losses and gradient norms", () => {
    const model = detInit(new EncoderLM());
    const opt = new optim.AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.01 });
    const sched = optim.getCosineScheduleWithWarmup(opt, 5, 20);
    const losses: number[] = [];
    const norms: number[] = [];
    for (let s = 0; s < 20; s++) {
      const [idx, tgt, pad] = lmBatch(s % 4);
      opt.zeroGrad();
      const logits = model.call(idx, pad);
      const loss = crossEntropy(logits.reshape([-1, V]), tgt.reshape([-1]), { labelSmoothing: 0.1 });
      loss.backward();
      norms.push(nn.utils.clipGradNorm(model.parameters(), 1.0).item());
      opt.step();
      sched.step();
      losses.push(loss.item());
    }
    assertSeries(losses, fixture.encoder_lm.losses, "encoder LM loss");
    assertSeries(norms, fixture.encoder_lm.gradNorms, "encoder LM gradient norm");
  });
});
