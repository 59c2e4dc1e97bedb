// The edge cases of issue 22, one assertion each, with the results PyTorch 2.13 gives (checked with
// ~/.venvs/peer/bin/python; the random corpus in fuzz_corpus.test.ts covers them more widely).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as rt from "../../src/index.js";

const values = (t: rt.Tensor) => Array.from(t.data() as ArrayLike<number>);

describe("issue 22 edge cases against PyTorch", () => {
  test("indexing a 0-d tensor along a dim raises instead of aborting the process", () => {
    const x = rt.full([], 1.5);
    assert.throws(() => rt.slice(x, 0), /slice: cannot be applied to a 0-d tensor/);
    assert.throws(() => rt.narrow(x, 0, 0, 1), /narrow: cannot be applied to a 0-d tensor/);
    assert.throws(() => rt.split(x, 1), /split: cannot be applied to a 0-d tensor/);
    assert.throws(() => rt.select(x, 0, 0), /select: cannot be applied to a 0-d tensor/);
    assert.throws(() => rt.zeros([Number.NaN]), /non-negative integer sizes/);
    assert.throws(() => rt.empty([2.5]), /non-negative integer sizes/);
    assert.equal(x.item(), 1.5);
  });

  test("size-0 tensors are contiguous and take in-place ops and backward", () => {
    const z = rt.zeros([2, 0]);
    assert.equal(z.isContiguous(), true);
    z.add_(1);
    const w = rt.zeros([3, 0], { requiresGrad: true });
    const b = rt.tensor([1, 2, 3], { requiresGrad: true });
    const y = rt.linear(rt.zeros([4, 0]), w, b);
    assert.deepEqual(y.shape, [4, 3]);
    assert.deepEqual(values(y), [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    y.sum().backward();
    assert.deepEqual(w.grad!.shape, [3, 0]);
    assert.deepEqual(values(b.grad!), [4, 4, 4]);
  });

  test("0-d tensors: reductions with a dim, dim [] reduces all, promotion by category", () => {
    assert.equal(rt.sum(rt.full([], 2), 0).item(), 2);
    assert.deepEqual(rt.sum(rt.ones([2, 3]), []).shape, []);
    assert.throws(() => rt.indexSelect(rt.full([], 1), 0, []), /exactly 1 value/);
    assert.equal(rt.add(rt.ones([2]), rt.full([], 1, { dtype: "float64" })).dtype, "float32");
    assert.equal(rt.add(rt.ones([2], { dtype: "int32" }), rt.full([], 1.5, { dtype: "float64" })).dtype, "float64");
  });

  test("in-place ops write through non-contiguous views and refuse overlapping ones", () => {
    const x = rt.zeros([2, 3]);
    rt.transpose(x, 0, 1).add_(rt.tensor([[1, 2], [3, 4], [5, 6]]));
    assert.deepEqual(x.toArray(), [[1, 3, 5], [2, 4, 6]]);
    rt.slice(x, 1, 0, 3, 2).fill_(0);
    assert.deepEqual(x.toArray(), [[0, 3, 0], [0, 4, 0]]);
    assert.throws(() => rt.expand(rt.zeros([1, 3]), [2, 3]).add_(1), /refers to one memory location/);
  });

  test("int32 and bool follow PyTorch's dtypes and refusals", () => {
    const i = rt.tensor([-2, 0, 3], { dtype: "int32" });
    assert.equal(rt.exp(i).dtype, "float32");
    assert.equal(rt.abs(i).dtype, "int32");
    assert.deepEqual(values(rt.clamp(i, 0, 2)), [0, 0, 2]);
    assert.equal(rt.clamp(i, 0.5, 2.2).dtype, "float32");
    assert.equal(rt.pow(i, 2.5).dtype, "float32");
    assert.throws(() => rt.pow(i, -1), /negative integer powers/);
    assert.throws(() => i.clone().add_(0.5), /cannot be written into a int32 tensor/);
    const filled = rt.maskedFill(i, rt.tensor([true, false, true]), 2.5);
    assert.equal(filled.dtype, "int32");
    assert.deepEqual(values(filled), [2, 0, 2]);
    const b = rt.tensor([true, false]);
    assert.throws(() => rt.sub(b, b), /subtraction with a bool tensor/);
    assert.throws(() => rt.pow(b, b), /both operands are bool/);
    assert.deepEqual(values(rt.matmul(rt.tensor([[1, 2]], { dtype: "int32" }), rt.tensor([[3], [4]], { dtype: "int32" }))), [11]);
  });

  test("arguments: clamp needs a bound, where takes two numbers, cat skips legacy empty tensors", () => {
    assert.throws(() => rt.clamp(rt.ones([2])), /at least one of min and max/);
    assert.throws(() => rt.slice(rt.ones([3]), 0, 1.5), /start must be an integer/);
    assert.throws(() => rt.expand(rt.ones([1, 4]), [2.5, 4]));
    assert.throws(() => rt.expand(rt.ones([1, 4]), [-2, 4]));
    const w = rt.where(rt.tensor([true, false]), 1.5, 0);
    assert.equal(w.dtype, "float32");
    assert.deepEqual(values(w), [1.5, 0]);
    assert.deepEqual(rt.cat([rt.zeros([0]), rt.ones([2, 2])], 1).shape, [2, 2]);
    assert.throws(() => rt.crossEntropy(rt.zeros([2, 3]), rt.zeros([2, 3]), { ignoreIndex: 1 }), /ignoreIndex/);
  });

  test("numerics: var without overflow, NaN bounds, pow of -inf", () => {
    assert.ok(Number.isFinite(rt.std(rt.tensor([1e20, -1e20, 3e20, 0])).item()));
    assert.ok(Number.isNaN(rt.clamp(rt.tensor([1, 2]), Number.NaN, 1).data()[0]));
    assert.ok(Number.isNaN(rt.pow(rt.tensor([Number.NEGATIVE_INFINITY]), -0.5).item()));
    assert.equal(rt.sign(rt.tensor([Number.NaN])).item(), 0);
  });

  test("gradients: sign, maximum at NaN, pow at 0, div, std at 0", () => {
    const s = rt.tensor([1, -2], { requiresGrad: true });
    rt.sign(s).sum().backward();
    assert.deepEqual(values(s.grad!), [0, 0]);
    const a = rt.tensor([Number.NaN, 1], { requiresGrad: true });
    const b = rt.tensor([1, 1], { requiresGrad: true });
    rt.maximum(a, b).sum().backward();
    assert.deepEqual(values(a.grad!), [1, 0.5]);
    assert.deepEqual(values(b.grad!), [1, 0.5]);
    const base = rt.tensor([0], { requiresGrad: true });
    const e = rt.tensor([0], { requiresGrad: true });
    rt.pow(base, e).sum().backward();
    assert.deepEqual(values(base.grad!), [0]);
    assert.deepEqual(values(e.grad!), [0]);
    const z = rt.full([3], 2, { requiresGrad: true });
    rt.std(z).backward();
    assert.deepEqual(values(z.grad!), [0, 0, 0]);
    const num = rt.tensor([1e-30]);
    const den = rt.tensor([1e-30], { requiresGrad: true });
    rt.div(num, den).sum().backward();
    assert.ok(Math.abs(den.grad!.item() + 1e30) / 1e30 < 1e-5);
  });
});
