// Attention masks: each way of saying the same mask gives the same result (the explicit additive
// float mask is the reference), and bad masks are clear errors.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { noGrad } from "../../src/autograd/grad_mode.js";
import { tensor } from "../../src/ops/index.js";
import { hashTensor } from "./det.js";

function mha(): nn.MultiheadAttention {
  const m = new nn.MultiheadAttention(8, 2, { batchFirst: true });
  noGrad(() => m.in_proj_weight!.copy_(hashTensor([24, 8], 1, 0.3)));
  return m;
}

const close = (a: number[][][], b: number[][][]) => a.flat(2).every((v, i) => Math.abs(v - b.flat(2)[i]) < 1e-6);

describe("attention masks", () => {
  const x = hashTensor([2, 4, 8], 7);
  const causal = nn.generateSquareSubsequentMask(4);

  it("isCausal equals an explicit -Infinity upper-triangular mask, and a bool mask the same", () => {
    const m = mha();
    const [explicit] = m.call(x, x, x, { attnMask: causal });
    const [flag] = m.call(x, x, x, { isCausal: true });
    const boolMask = tensor([0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0].map((v) => v === 1), { shape: [4, 4] });
    const [asBool] = m.call(x, x, x, { attnMask: boolMask });
    assert.ok(close(flag.toArray() as number[][][], explicit.toArray() as number[][][]));
    assert.ok(close(asBool.toArray() as number[][][], explicit.toArray() as number[][][]));
  });

  it("a padded key gets zero attention weight", () => {
    const m = mha();
    const pad = tensor([false, false, false, true, false, false, true, true], { shape: [2, 4] });
    const [, w] = m.call(x, x, x, { keyPaddingMask: pad });
    const weights = w!.toArray() as number[][][];
    for (let q = 0; q < 4; q++) {
      assert.equal(weights[0][q][3], 0);
      assert.equal(weights[1][q][2] + weights[1][q][3], 0);
      assert.ok(Math.abs(weights[0][q].reduce((a, b) => a + b, 0) - 1) < 1e-6);
    }
  });

  it("masks of the wrong shape are errors that name the expected shape", () => {
    const m = mha();
    assert.throws(() => m.call(x, x, x, { attnMask: nn.generateSquareSubsequentMask(3) }), /2-D attnMask must have shape \[4, 4\]/);
    assert.throws(() => m.call(x, x, x, { keyPaddingMask: tensor([true, false]) }), /keyPaddingMask must have shape \[2, 4\]/);
    assert.throws(() => m.call(hashTensor([2, 4, 6], 1), x, x), /query must be \[batch, seq, embed\] with embed = 8, got \[2, 4, 6\]/);
    assert.throws(() => new nn.MultiheadAttention(10, 3), /divisible by numHeads/);
  });
});
