// Training steps of a small GPT under autocast("bfloat16") on the amx GEMM path (AMX tiles) against
// the same steps on the portable path (the operands rounded to bfloat16 in float32 copies, then the
// float32 GEMM): the same products summed in another order, so the two agree to within bfloat16's
// tolerance (an activation at a rounding boundary may round either way), and both are apart from
// float32. Sizes are off the 16/32 tile grid (33 positions, width 48, vocabulary 50).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arange, autocast, crossEntropy, manualSeed, randint, type Tensor } from "../../src/index.js";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { cpuBackend, forEachThreadCount, skipWithoutNative } from "./cpu_support.js";

const [V, D, H, T, B] = [50, 48, 3, 33, 2];

class TinyGpt extends nn.Module {
  tok = new nn.Embedding(V, D);
  pos = new nn.Embedding(T, D);
  blocks = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(D, H, { dimFeedforward: 4 * D, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true }), 2);
  ln = new nn.LayerNorm(D);
  head = new nn.Linear(D, V, { bias: false });
  declare mask: Tensor;
  private readonly positions = arange(T);

  constructor() {
    super();
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(T));
  }

  override forward(idx: Tensor): Tensor {
    const x = this.tok.call(idx).add(this.pos.call(this.positions));
    return this.head.call(this.ln.call(this.blocks.call(x, { mask: this.mask })));
  }
}

interface Trace {
  losses: number[];
  /** Every parameter's gradient after the last step, flattened in parameter order. */
  grads: Float32Array[];
}

/** Two SGD steps from seed 3's weights and batch; low: under autocast. */
function train(low: boolean): Trace {
  manualSeed(3);
  const model = new TinyGpt();
  const idx = randint(0, V, [B, T]), tgt = randint(0, V, [B * T]);
  const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
  const losses: number[] = [];
  for (let s = 0; s < 2; s++) {
    opt.zeroGrad();
    const logits = autocast("bfloat16", { enabled: low }, () => model.call(idx).reshape([-1, V]));
    const loss = crossEntropy(logits, tgt);
    loss.backward();
    losses.push(loss.item());
    if (s === 0) opt.step();
  }
  const grads = model.parameters().map((p) => Float32Array.from(p.grad!.contiguous().storage.data as Float32Array).slice(0, p.numel));
  return { losses, grads };
}

/** Largest |x - y| over the largest |y| of each gradient. */
function gradGap(x: Trace, y: Trace): number {
  let worst = 0;
  x.grads.forEach((g, i) => {
    const ref = y.grads[i];
    const scale = Math.max(1e-12, ...Array.from(ref, Math.abs));
    g.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - ref[j]) / scale)));
  });
  return worst;
}

describe("a GPT training step under autocast on the amx path", () => {
  const skip = skipWithoutNative();
  const cpu = skip ? null : cpuBackend();
  const amx = cpu ? cpu.setBf16GemmPath("amx") : false;
  cpu?.setBf16GemmPath("auto");

  it("matches the portable path within bfloat16's tolerance, on 1 and 2 threads", { skip: skip || (amx ? false : "this CPU or OS has no AMX-BF16 tiles: the amx path cannot run here") }, () => {
    try {
      assert.ok(cpu!.setBf16GemmPath("portable"));
      const portable = train(true);
      const full = train(false);
      // autocast changed the step: the comparison below is between two bfloat16 runs.
      assert.ok(gradGap(portable, full) > 2 ** -12, `autocast left the gradients within ${gradGap(portable, full)} of float32`);
      assert.ok(cpu!.setBf16GemmPath("amx"));
      forEachThreadCount((threads) => {
        assert.equal(cpu!.bf16GemmPath(), "amx");
        const tiles = train(true);
        tiles.losses.forEach((l, s) => assert.ok(Math.abs(l - portable.losses[s]) <= 2 ** -12 * Math.abs(portable.losses[s]), `${threads} thread(s), step ${s}: loss ${l} on amx, ${portable.losses[s]} portable`));
        const gap = gradGap(tiles, portable);
        assert.ok(gap <= 2 ** -9, `${threads} thread(s): gradients ${gap} (of each one's largest) apart from the portable path's`);
      });
    } finally {
      cpu!.setBf16GemmPath("auto");
    }
  });
});
