// The fused scaledDotProductAttention against the same attention composed from matmul and softmax
// (values and gradients), finite differences in float64, the reference backend, and a dropout mask
// rebuilt from the spec'd keep-test.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { gradcheck, grad } from "../../src/autograd/index.js";
import { attentionKeep } from "../../src/backend/reference/attention.js";
import { firstDerivative } from "../ops/double_backward_support.js";
import { assertClose } from "../helpers.js";

const F = rt.nn.functional;

/** softmax(scale·q·kᵀ + bias)·v from public ops: the independent formula. */
function composed(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | null, scale?: number): Tensor {
  const e = q.shape[q.ndim - 1];
  let scores = rt.mul(rt.matmul(q, rt.transpose(k, -2, -1)), scale ?? 1 / Math.sqrt(e));
  if (bias) scores = rt.add(scores, bias);
  return rt.matmul(rt.softmax(scores, -1), v);
}

function causalBias(l: number, s: number, dtype: "float32" | "float64"): Tensor {
  return rt.triu(rt.full([l, s], Number.NEGATIVE_INFINITY, { dtype }), 1);
}

function leaf(shape: number[], gen: rt.Generator, dtype: "float32" | "float64" = "float64"): Tensor {
  return rt.randn(shape, { dtype, generator: gen }).requiresGrad_();
}

/** Output and input gradients of ⟨f(q,k,v), w⟩. */
function run(f: (q: Tensor, k: Tensor, v: Tensor) => Tensor, q: Tensor, k: Tensor, v: Tensor, w: Tensor): Tensor[] {
  const y = f(q, k, v);
  const gs = grad(y, [q, k, v], w);
  return [y, ...(gs as Tensor[])];
}

describe("scaledDotProductAttention (fused)", () => {
  // Sizes cross the kernel's 64-row and 128-key tiles; E ≠ Ev; L ≠ S.
  const cases: { name: string; batch: number[]; l: number; s: number; e: number; ev: number; mask: "none" | "causal" | "padding" | "float" }[] = [
    { name: "4-D, no mask", batch: [2, 3], l: 5, s: 7, e: 4, ev: 6, mask: "none" },
    { name: "4-D causal across tiles", batch: [1, 2], l: 150, s: 150, e: 8, ev: 8, mask: "causal" },
    { name: "causal with L < S", batch: [2, 1], l: 70, s: 140, e: 5, ev: 3, mask: "causal" },
    { name: "padding mask [N,1,1,S] across tiles", batch: [2, 2], l: 66, s: 131, e: 4, ev: 4, mask: "padding" },
    { name: "3-D with a float [L,S] mask", batch: [3], l: 9, s: 4, e: 2, ev: 5, mask: "float" },
  ];
  for (const c of cases) {
    it(`equals the composed ops, values and gradients: ${c.name}`, () => {
      const gen = new rt.Generator(c.l * 31 + c.s);
      const q = leaf([...c.batch, c.l, c.e], gen);
      const k = leaf([...c.batch, c.s, c.e], gen);
      const v = leaf([...c.batch, c.s, c.ev], gen);
      const w = rt.randn([...c.batch, c.l, c.ev], { dtype: "float64", generator: gen });
      let attnMask: Tensor | null = null;
      let bias: Tensor | null = null;
      if (c.mask === "causal") bias = causalBias(c.l, c.s, "float64");
      if (c.mask === "padding") {
        // Batch 0 pads its last 9 keys, batch 1 its last 100: a tile of keys entirely padded.
        const keep = Array.from({ length: c.batch[0] * c.s }, (_, i) => (i % c.s) < c.s - (i < c.s ? 9 : 100));
        attnMask = rt.tensor(keep, { shape: [c.batch[0], 1, 1, c.s] });
        bias = rt.where(attnMask, rt.zeros([], { dtype: "float64" }), rt.full([], Number.NEGATIVE_INFINITY, { dtype: "float64" }));
      }
      if (c.mask === "float") {
        attnMask = rt.randn([c.l, c.s], { dtype: "float64", generator: gen });
        bias = attnMask;
      }
      const fused = run((a, b, d) => F.scaledDotProductAttention(a, b, d, { attnMask, isCausal: c.mask === "causal" }), q, k, v, w);
      const reference = run((a, b, d) => composed(a, b, d, bias), q, k, v, w);
      const names = ["output", "dq", "dk", "dv"];
      fused.forEach((t, i) => assertClose(t, reference[i], 1e-10, 1e-9, names[i]));
    });
  }

  it("float32 agrees with the composed ops, and takes permuted (non-contiguous) head views", () => {
    const gen = new rt.Generator(5);
    const [n, l, h, e] = [2, 80, 3, 16];
    const base = () => rt.randn([n, l, h, e], { generator: gen }).requiresGrad_();
    const [q0, k0, v0] = [base(), base(), base()];
    const heads = (t: Tensor) => rt.permute(t, [0, 2, 1, 3]);
    const w = rt.randn([n, h, l, e], { generator: gen });
    const fused = run((a, b, d) => F.scaledDotProductAttention(heads(a), heads(b), heads(d), { isCausal: true }), q0, k0, v0, w);
    const reference = run((a, b, d) => composed(heads(a), heads(b), heads(d), causalBias(l, l, "float32")), q0, k0, v0, w);
    fused.forEach((t, i) => assertClose(t, reference[i], 2e-5, 1e-4, `float32 #${i}`));
  });

  it("passes gradcheck in float64 (causal, float mask, custom scale), and double backward", () => {
    const gen = new rt.Generator(11);
    const q = leaf([1, 2, 3, 4], gen);
    const k = leaf([1, 2, 5, 4], gen);
    const v = leaf([1, 2, 5, 3], gen);
    const mask = rt.randn([3, 5], { dtype: "float64", generator: gen });
    assert.ok(gradcheck((a, b, d) => F.scaledDotProductAttention(a, b, d, { attnMask: mask, scale: 0.7 }), [q, k, v]));
    const qc = leaf([2, 4, 3], gen);
    const kc = leaf([2, 4, 3], gen);
    const vc = leaf([2, 4, 2], gen);
    assert.ok(gradcheck((a, b, d) => F.scaledDotProductAttention(a, b, d, { isCausal: true }), [qc, kc, vc]));
    const f = (a: Tensor, b: Tensor, d: Tensor) => F.scaledDotProductAttention(a, b, d, { isCausal: true });
    assert.ok(gradcheck(firstDerivative(f, (a, _b, d) => [...a.shape.slice(0, -1), d.shape[d.ndim - 1]], gen), [qc, kc, vc]));
  });

  it("dropout keeps exactly the scores the spec'd keep-test keeps, forward and backward", () => {
    const gen = new rt.Generator(3);
    const [n, h, l, s, e] = [2, 2, 5, 140, 4];
    const q = leaf([n, h, l, e], gen);
    const k = leaf([n, h, s, e], gen);
    const v = leaf([n, h, s, e], gen);
    const w = rt.randn([n, h, l, e], { dtype: "float64", generator: gen });
    const p = 0.3;
    const seeded = new rt.Generator(99);
    const fused = run((a, b, d) => F.scaledDotProductAttention(a, b, d, { dropoutP: p, generator: seeded }), q, k, v, w);
    // The same two draws the op makes, then the mask from the keep-test over (b·l + i)·s + j.
    const probe = new rt.Generator(99);
    const seed = (BigInt(probe.nextUint32() >>> 0) | (BigInt(probe.nextUint32() >>> 0) << 32n));
    const keep = Array.from({ length: n * h * l * s }, (_, idx) => (attentionKeep(seed, idx, p) ? 1 / (1 - p) : 0));
    const z = rt.tensor(keep, { dtype: "float64", shape: [n, h, l, s] });
    const dropped = (a: Tensor, b: Tensor, d: Tensor) => rt.matmul(rt.mul(rt.softmax(rt.mul(rt.matmul(a, rt.transpose(b, -2, -1)), 0.5), -1), z), d);
    const reference = run(dropped, q, k, v, w);
    fused.forEach((t, i) => assertClose(t, reference[i], 1e-10, 1e-9, `dropout #${i}`));
    const kept = keep.filter((x) => x > 0).length / keep.length;
    assert.ok(Math.abs(kept - (1 - p)) < 0.03, `kept fraction ${kept} should be near ${1 - p}`);
  });

  it("the cpu kernel equals the reference backend", () => {
    const gen = new rt.Generator(8);
    const q = leaf([2, 1, 70, 3], gen, "float32");
    const k = leaf([2, 1, 130, 3], gen, "float32");
    const v = leaf([2, 1, 130, 2], gen, "float32");
    const w = rt.randn([2, 1, 70, 2], { generator: gen });
    const mask = rt.randn([70, 130], { generator: gen });
    const f = (a: Tensor, b: Tensor, d: Tensor) => F.scaledDotProductAttention(a, b, d, { attnMask: mask, dropoutP: 0.2, generator: new rt.Generator(4) });
    const cpu = run(f, q, k, v, w);
    const ref = rt.withBackend("reference", () => run(f, q, k, v, w));
    cpu.forEach((t, i) => assertClose(t, ref[i], 2e-5, 1e-4, `cpu vs reference #${i}`));
  });

  it("rejects bad input with what was expected and what came", () => {
    const x = rt.zeros([1, 2, 3, 4]);
    assert.throws(() => F.scaledDotProductAttention(x, rt.zeros([1, 2, 3, 5]), x), /q \[\.\.\., L, E\], k \[\.\.\., S, E\].*\[1, 2, 3, 5\]/);
    assert.throws(() => F.scaledDotProductAttention(x, x, x, { isCausal: true, attnMask: rt.zeros([3, 3]) }), /not both/);
    assert.throws(() => F.scaledDotProductAttention(x, x, x, { attnMask: rt.zeros([4, 3]) }), /attnMask \[4, 3\] does not broadcast to .*\[1, 2, 3, 3\]/);
    assert.throws(() => F.scaledDotProductAttention(x, x, x, { dropoutP: 1 }), /dropoutP must be in \[0, 1\), got 1/);
    assert.throws(() => F.scaledDotProductAttention(x, x, x, { causal: true } as never), /causal/);
    assert.throws(() => F.scaledDotProductAttention(x, x, rt.zeros([1, 2, 3, 4], { dtype: "float64" })), /share a dtype/);
  });
});
