// autocast("bfloat16"): each autocast op against float32 — exactly the float32 product of the
// bfloat16-rounded operands (up to float32 summation order), and within bfloat16's tolerance of
// the float32 op; ops outside the low-precision list unchanged; gradients and their dtypes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  autocast,
  bmm,
  crossEntropy,
  getAutocastDtype,
  isAutocastEnabled,
  layerNorm,
  linear,
  manualSeed,
  matmul,
  randint,
  randn,
  softmax,
  type Tensor,
  withBackend,
} from "../../src/index.js";
import { scaledDotProductAttention } from "../../src/nn/functional.js";
import { attentionWithWeights } from "../../src/nn/attention.js";

const round = (t: Tensor) => t.to("bfloat16").float();
const values = (t: Tensor) => Array.from(t.float().contiguous().storage.data as Float32Array).slice(0, t.numel);

/** |x - y| <= rel * scale elementwise, where scale is the largest magnitude of y (products mix signs). */
function assertClose(x: Tensor, y: Tensor, rel: number, what: string): void {
  assert.deepEqual(x.shape, y.shape, `${what}: shape`);
  const a = values(x), b = values(y);
  const scale = Math.max(1e-6, ...b.map(Math.abs));
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= rel * scale, `${what}: element ${i} is ${v}, expected ${b[i]} (tolerance ${rel * scale})`));
}

// bfloat16 keeps 8 bits: each operand is off by up to 2^-9 relative, a product by about 2^-8.
const BF16 = 2 ** -6;
const F32 = 1e-5;

describe("autocast", () => {
  manualSeed(1);

  it("runs matmul, mm, bmm and 1-D products on bfloat16 operands with float32 sums", () => {
    const cases: [Tensor, Tensor][] = [
      [randn([7, 33]), randn([33, 5])],
      [randn([3, 17, 9]), randn([3, 9, 11])],
      [randn([2, 1, 6, 10]), randn([4, 10, 3])],
      [randn([19]), randn([19, 4])],
      [randn([5, 23]), randn([23])],
      [randn([40]), randn([40])],
    ];
    for (const [a, b] of cases) {
      const out = autocast("bfloat16", () => (a.ndim === 3 && b.ndim === 3 ? bmm(a, b) : matmul(a, b)));
      assert.equal(out.dtype, "float32");
      assertClose(out, matmul(round(a), round(b)), F32, `matmul ${a.shape} @ ${b.shape} vs rounded`);
      assertClose(out, matmul(a, b), BF16, `matmul ${a.shape} @ ${b.shape} vs float32`);
    }
  });

  it("runs linear with a bias of either dtype", () => {
    const x = randn([4, 6, 37]), w = randn([21, 37]), b = randn([21]);
    for (const bias of [b, b.to("bfloat16"), null]) {
      const out = autocast("bfloat16", () => linear(x, w, bias));
      const bf = bias ? bias.float() : null;
      assertClose(out, linear(round(x), round(w), bf), F32, "linear vs rounded");
      assertClose(out, linear(x, w, bf), BF16, "linear vs float32");
    }
  });

  it("runs attention's products in bfloat16 and its softmax in float32", () => {
    const q = randn([2, 3, 8, 16]), k = randn([2, 3, 10, 16]), v = randn([2, 3, 10, 16]);
    const low = autocast("bfloat16", () => attentionWithWeights(q, k, v));
    const full = attentionWithWeights(q, k, v);
    assert.equal(low.output.dtype, "float32");
    assertClose(low.weights, full.weights, 4 * BF16, "attention weights");
    assertClose(low.output, full.output, 4 * BF16, "attention output");
  });

  it("runs the fused attention's products in bfloat16, as the reference backend does, gradients included", () => {
    const mask = randn([9, 12]).gt(-1);
    const leaves = () => [randn([2, 3, 9, 16]), randn([2, 3, 12, 16]), randn([2, 3, 12, 8])].map((t) => t.requiresGrad_());
    const [q, k, v] = leaves();
    const w = randn([2, 3, 9, 8]);
    const run = (low: boolean) => {
      for (const t of [q, k, v]) t.grad = null;
      const y = autocast("bfloat16", { enabled: low }, () => scaledDotProductAttention(q, k, v, { attnMask: mask }));
      y.mul(w).sum().backward();
      return [y.detach(), q.grad!, k.grad!, v.grad!];
    };
    const low = run(true);
    const onReference = withBackend("reference", () => run(true));
    const full = run(false);
    low.forEach((t, i) => {
      assert.equal(t.dtype, "float32");
      // The reference sums the same bfloat16-rounded operands in float64 (test/backend/attention_bf16.test.ts).
      assertClose(t, onReference[i], 2 ** -12, `fused under autocast vs the reference backend, output/grad ${i}`);
      assertClose(t, full[i], 8 * BF16, `fused under autocast vs float32, output/grad ${i}`);
    });
    assert.ok(values(low[0]).some((x, i) => x !== values(full[0])[i]), "autocast changes the fused result");
    // bfloat16 operands are widened and give a float32 result under autocast.
    const widened = autocast("bfloat16", () => scaledDotProductAttention(q.detach().to("bfloat16"), k.detach().to("bfloat16"), v.detach().to("bfloat16")));
    assert.equal(widened.dtype, "float32");
    assertClose(widened, autocast("bfloat16", () => scaledDotProductAttention(round(q.detach()), round(k.detach()), round(v.detach()))), F32, "bfloat16 operands");
  });

  it("leaves softmax, layer norm, reductions and losses in float32, unchanged", () => {
    const x = randn([6, 12]), w = randn([12]), t = randint(0, 12, [6]);
    const inside = autocast("bfloat16", () => [softmax(x, -1), layerNorm(x, [12], w, null), x.sum(), crossEntropy(x, t)]);
    const outside = [softmax(x, -1), layerNorm(x, [12], w, null), x.sum(), crossEntropy(x, t)];
    inside.forEach((v, i) => {
      assert.equal(v.dtype, "float32");
      assert.deepEqual(values(v), values(outside[i]));
    });
  });

  it("widens bfloat16 operands of layer norm, softmax and cross entropy inside autocast", () => {
    const x = randn([4, 8]).to("bfloat16"), w = randn([8]).to("bfloat16").requiresGrad_(), t = randint(0, 8, [4]);
    const [ln, sm, ce] = autocast("bfloat16", () => [layerNorm(x, [8], w, null), softmax(x, -1), crossEntropy(x, t)]);
    assert.deepEqual([ln.dtype, sm.dtype, ce.dtype], ["float32", "float32", "float32"]);
    assert.deepEqual(values(ln), values(layerNorm(x.float(), [8], w.detach().float(), null)));
    assert.deepEqual(values(sm), values(softmax(x.float(), -1)));
    assert.deepEqual(values(ce), values(crossEntropy(x.float(), t)));
    ln.sum().backward();
    assert.equal(w.grad!.dtype, "bfloat16");
    // Outside autocast a bfloat16 layer norm stays bfloat16, as PyTorch's CPU kernel (float32 inside, rounded once).
    const plain = layerNorm(x, [8], w, null);
    assert.equal(plain.dtype, "bfloat16");
    assert.deepEqual(values(plain), values(layerNorm(x.float(), [8], w.detach().float(), null).to("bfloat16")));
  });

  it("differentiates through the casts: gradients in the inputs' dtypes, within bfloat16 of float32", () => {
    const x = randn([5, 24]).requiresGrad_(), w = randn([16, 24]).requiresGrad_(), b = randn([16]).requiresGrad_();
    const u = randn([16, 7]).requiresGrad_();
    const loss = (fn: () => Tensor) => {
      for (const p of [x, w, b, u]) p.grad = null;
      fn().backward();
      return [x, w, b, u].map((p) => p.grad!);
    };
    const f = () => matmul(linear(x, w, b).tanh(), u).square().sum();
    const low = loss(() => autocast("bfloat16", f));
    const full = loss(f);
    low.forEach((g, i) => {
      assert.equal(g.dtype, "float32");
      assertClose(g, full[i], 8 * BF16, `grad ${i}`);
    });
    // A bfloat16 parameter gets a bfloat16 gradient.
    const wb = w.detach().to("bfloat16").requiresGrad_();
    autocast("bfloat16", () => linear(x, wb).sum()).backward();
    assert.equal(wb.grad!.dtype, "bfloat16");
    assertClose(wb.grad!, matmul(randn([16, 5]).mul(0).add(1), x.detach()), BF16, "bfloat16 weight grad");
  });

  it("runs a backward in the precision of its forward, whatever autocast is doing then", () => {
    const x = randn([5, 24]).requiresGrad_(), w = randn([16, 24]).requiresGrad_(), u = randn([16, 3]).requiresGrad_();
    const grads = (inside: boolean) => {
      for (const p of [x, w, u]) p.grad = null;
      const loss = matmul(linear(x, w), u).sum();
      autocast("bfloat16", { enabled: inside }, () => loss.backward());
      return [x, w, u].map((p) => values(p.grad!));
    };
    assert.deepEqual(grads(true), grads(false));
  });

  it("multiplies two bfloat16 tensors outside autocast into bfloat16, as PyTorch does", () => {
    const a = randn([9, 14]).to("bfloat16"), b = randn([14, 6]).to("bfloat16");
    const out = matmul(a, b);
    assert.equal(out.dtype, "bfloat16");
    assert.deepEqual(values(out), values(matmul(a.float(), b.float()).to("bfloat16")));
    assert.throws(() => matmul(a, b.float()), /same dtype/);
  });

  it("leaves float64 alone", () => {
    const a = randn([4, 5], { dtype: "float64" }), b = randn([5, 3], { dtype: "float64" });
    const out = autocast("bfloat16", () => matmul(a, b));
    assert.equal(out.dtype, "float64");
    assert.deepEqual(values(out), values(matmul(a, b)));
  });

  it("nests, turns off with { enabled: false }, and restores after a throw or a promise", async () => {
    assert.equal(isAutocastEnabled(), false);
    assert.equal(getAutocastDtype(), "bfloat16");
    autocast("bfloat16", () => {
      assert.equal(isAutocastEnabled(), true);
      autocast("bfloat16", { enabled: false }, () => assert.equal(isAutocastEnabled(), false));
      assert.equal(isAutocastEnabled(), true);
    });
    assert.throws(() => autocast("bfloat16", () => { throw new Error("boom"); }), /boom/);
    assert.equal(isAutocastEnabled(), false);
    const p = autocast("bfloat16", async () => isAutocastEnabled());
    assert.equal(isAutocastEnabled(), true);
    assert.equal(await p, true);
    assert.equal(isAutocastEnabled(), false);
  });

  it("rejects other dtypes, unknown options and a missing function", () => {
    assert.throws(() => autocast("float16", () => 0), /"bfloat16" only, got "float16"/);
    assert.throws(() => autocast("bfloat16", { enable: true } as never, () => 0), /unknown option "enable"; did you mean enabled/);
    assert.throws(() => (autocast as (d: string) => unknown)("bfloat16"), /expected a function/);
  });
});
