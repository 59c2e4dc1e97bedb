// packedSelfAttention (MultiheadAttention's self-attention path: q, k, v read out of one packed
// projection) against the attention composed from public ops on q, k, v split out of qkv (values
// and gradients), finite differences in float64 (first and second derivatives), and
// MultiheadAttention's self-attention against its split path (separate key and value tensors).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { gradcheck, grad } from "../../src/autograd/index.js";
import { packedSelfAttention } from "../../src/ops/packed_attention.js";
import { firstDerivative } from "../ops/double_backward_support.js";
import { assertClose } from "../helpers.js";

/** The independent formula: split, softmax(q·kᵀ/√d + bias)·v per head, heads merged. */
function composed(qkv: Tensor, h: number, bias: Tensor | null): Tensor {
  const [n, l, e3] = qkv.shape;
  const e = e3 / 3;
  const heads = (t: Tensor) => rt.permute(rt.reshape(t, [n, l, h, e / h]), [0, 2, 1, 3]);
  const [q, k, v] = [0, 1, 2].map((i) => heads(rt.narrow(qkv, 2, i * e, e)));
  let scores = rt.mul(rt.matmul(q!, rt.transpose(k!, -2, -1)), 1 / Math.sqrt(e / h));
  if (bias) scores = rt.add(scores, bias);
  return rt.reshape(rt.permute(rt.matmul(rt.softmax(scores, -1), v!), [0, 2, 1, 3]), [n, l, e]);
}

const causal = (l: number, dtype: "float32" | "float64") => rt.triu(rt.full([l, l], Number.NEGATIVE_INFINITY, { dtype }), 1);

describe("packedSelfAttention", () => {
  for (const dtype of ["float32", "float64"] as const) {
    for (const mask of ["none", "causal", "padding"] as const) {
      it(`matches the composed attention, ${dtype}, mask ${mask} (values and gradients)`, () => {
        const gen = new rt.Generator(3);
        const [n, l, h, e] = [3, 7, 4, 24];
        const qkv = rt.randn([n, l, 3 * e], { dtype, generator: gen }).requiresGrad_();
        const padding = rt.where(rt.tensor([[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 1]]).eq(1), -Infinity, 0).to(dtype).reshape([n, 1, 1, l]);
        const bias = mask === "padding" ? padding : null;
        const w = rt.randn([n, l, e], { dtype, generator: gen });
        const y = packedSelfAttention(qkv, h, { bias, isCausal: mask === "causal" });
        const [g] = grad(y, [qkv], w) as Tensor[];
        const ref = composed(qkv, h, mask === "causal" ? causal(l, dtype) : bias);
        const [gRef] = grad(ref, [qkv], w) as Tensor[];
        const tol = dtype === "float32" ? 1e-5 : 1e-12;
        assertClose(y, ref, tol, tol);
        assertClose(g!, gRef!, tol, tol);
      });
    }
  }

  it("passes gradcheck in float64, first and second derivatives", () => {
    const gen = new rt.Generator(5);
    const qkv = rt.randn([2, 5, 3 * 8], { dtype: "float64", generator: gen }).requiresGrad_();
    assert.ok(gradcheck((x) => packedSelfAttention(x, 2), [qkv]));
    assert.ok(gradcheck((x) => packedSelfAttention(x, 2, { isCausal: true }), [qkv]));
    const f = (x: Tensor) => packedSelfAttention(x, 2, { isCausal: true });
    assert.ok(gradcheck(firstDerivative(f, (x) => [x.shape[0], x.shape[1], x.shape[2] / 3], gen), [qkv]));
  });

  it("runs its products in bfloat16 under autocast, as the reference backend does, gradients included", () => {
    const gen = new rt.Generator(7);
    const [n, l, h, e] = [2, 9, 4, 32];
    const qkv = rt.randn([n, l, 3 * e], { generator: gen }).requiresGrad_();
    const w = rt.randn([n, l, e], { generator: gen });
    const run = (low: boolean, isCausal: boolean) => {
      qkv.grad = null;
      const y = rt.autocast("bfloat16", { enabled: low }, () => packedSelfAttention(qkv, h, { isCausal }));
      y.mul(w).sum().backward();
      return [y.detach(), qkv.grad!];
    };
    for (const isCausal of [false, true]) {
      const low = run(true, isCausal);
      const onReference = rt.withBackend("reference", () => run(true, isCausal));
      const full = run(false, isCausal);
      const bf16 = 2 ** -6;
      low.forEach((t, i) => {
        assert.equal(t.dtype, "float32");
        // The reference backend sums the same bfloat16-rounded operands in float64.
        assertClose(t, onReference[i]!, 2 ** -12, 2 ** -12);
        assertClose(t, full[i]!, 8 * bf16, 8 * bf16);
      });
      const [a, b] = [low[0]!.storage.data, full[0]!.storage.data];
      assert.ok(Array.from(a).some((x, i) => x !== b[i]), "autocast changes the result");
    }
  });

  it("refuses a qkv whose last dim is not 3·E for the heads, and a bias with a causal flag", () => {
    assert.throws(() => packedSelfAttention(rt.randn([2, 3, 10]), 2), /qkv must be \[N, L, 3·E\]/);
    assert.throws(() => packedSelfAttention(rt.randn([2, 3, 12]), 2, { bias: rt.zeros([3, 3]), isCausal: true }), /not both/);
  });
});

describe("MultiheadAttention self-attention (the packed path)", () => {
  for (const batchFirst of [true, false]) {
    it(`gives the split path's output and gradients (batchFirst ${batchFirst}, dropout in training)`, () => {
      const results = [false, true].map((split) => {
        rt.manualSeed(11);
        const mha = new rt.nn.MultiheadAttention(16, 4, { batchFirst, dropout: 0.25, dtype: "float64" });
        const x = rt.randn(batchFirst ? [3, 6, 16] : [6, 3, 16], { dtype: "float64" }).requiresGrad_();
        // A key and value equal to the query but other tensors take the split path.
        const [kv1, kv2] = split ? [rt.mul(x, 1), rt.mul(x, 1)] : [x, x];
        const mask = rt.tensor([0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0], { shape: [3, 6] }).eq(1);
        rt.manualSeed(12);
        const [y] = mha.call(x, kv1, kv2, { needWeights: false, keyPaddingMask: mask });
        y.mul(rt.randn(y.shape, { dtype: "float64", generator: new rt.Generator(1) })).sum().backward();
        return [y, x.grad!, mha.in_proj_weight!.grad!, mha.in_proj_bias!.grad!, mha.out_proj.weight.grad!];
      });
      results[0]!.forEach((t, i) => assertClose(t, results[1]![i]!, 1e-12, 1e-12));
    });
  }

  it("under autocast gives the split path's output and gradients, within float32 summation order", () => {
    const results = [false, true].map((split) => {
      rt.manualSeed(13);
      const mha = new rt.nn.MultiheadAttention(32, 4, { batchFirst: true });
      const x = rt.randn([3, 10, 32]).requiresGrad_();
      const [kv1, kv2] = split ? [rt.mul(x, 1), rt.mul(x, 1)] : [x, x];
      const [y] = rt.autocast("bfloat16", () => mha.call(x, kv1, kv2, { needWeights: false, attnMask: rt.nn.generateSquareSubsequentMask(10) }));
      y.mul(rt.randn(y.shape, { generator: new rt.Generator(1) })).sum().backward();
      return [y, x.grad!, mha.in_proj_weight!.grad!, mha.in_proj_bias!.grad!, mha.out_proj.weight.grad!];
    });
    // Both round the same float32 operands to bfloat16 and sum in float32; the split path adds x's
    // three gradients (and sums over the keys and values) in another order.
    results[0]!.forEach((t, i) => {
      assert.equal(t.dtype, "float32");
      assertClose(t, results[1]![i]!, 1e-4, 1e-4);
    });
  });

  it("under autocast gives the split path's second derivatives (create_graph)", () => {
    const results = [false, true].map((split) => {
      rt.manualSeed(13);
      const mha = new rt.nn.MultiheadAttention(32, 4, { batchFirst: true });
      const x = rt.randn([2, 6, 32]).requiresGrad_();
      const [kv1, kv2] = split ? [rt.mul(x, 1), rt.mul(x, 1)] : [x, x];
      const [y] = rt.autocast("bfloat16", () => mha.call(x, kv1, kv2, { needWeights: false, attnMask: rt.nn.generateSquareSubsequentMask(6) }));
      const [gx] = grad(y.mul(y).sum(), [x], undefined, { createGraph: true }) as Tensor[];
      const [ggx] = grad(gx!.mul(gx!).sum(), [x]) as Tensor[];
      return [gx!.detach(), ggx!];
    });
    results[0]!.forEach((t, i) => assertClose(t, results[1]![i]!, 1e-4, 1e-4));
  });
});
