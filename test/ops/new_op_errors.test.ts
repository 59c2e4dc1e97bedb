// Bad arguments to the new ops give errors that name the op, what was expected and what came.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";

const int = (v: number[][] | number[]) => rt.tensor(v as number[], { dtype: "int32" });

describe("new op argument errors", () => {
  it("trigonometry and atan2", () => {
    assert.throws(() => rt.sin([1, 2] as never), /sin: expected input to be a Tensor, got an array of length 2/);
    assert.throws(() => rt.atan2(rt.zeros([2, 3]), rt.zeros([4])), /atan2/);
    assert.deepEqual(rt.sin(int([0])).dtype, "float32");
  });

  it("norms and logsumexp", () => {
    assert.throws(() => rt.linalg.vectorNorm(int([1, 2])), /vectorNorm: expected a float32 or float64 tensor, got int32/);
    assert.throws(() => rt.linalg.vectorNorm(rt.zeros([2]), "fro" as never), /ord must be a number/);
    assert.throws(() => rt.linalg.vectorNorm(rt.zeros([2]), 2, 1), /dim 1 is out of range/);
    assert.throws(() => rt.linalg.vectorNorm(rt.zeros([2]), 2, null, false, { dtpye: "float64" } as never), /unknown option "dtpye"; did you mean dtype\?/);
    assert.throws(() => rt.norm(rt.zeros([2, 2]), "nuc" as never), /norm: p must be "fro" or a number, got "nuc"/);
    assert.throws(() => rt.linalg.vectorNorm(rt.zeros([0]), Infinity), /inf norm of an empty tensor/);
    assert.throws(() => rt.amax(rt.zeros([2, 0]), 1), /amax: cannot reduce dim 1 of size 0/);
    assert.throws(() => rt.logsumexp(rt.zeros([2]), [0, 0]), /appears more than once/);
  });

  it("nllLoss", () => {
    const logp = rt.zeros([2, 3]);
    assert.throws(() => rt.nllLoss(logp, rt.tensor([0, 1])), /nllLoss: the target must hold int32 class indices, got float32 \[2\]; convert with .int\(\)/);
    assert.throws(() => rt.nllLoss(logp, int([0, 3])), /nllLoss: target 3 \(at flat position 1\) is not a class index in \[0, 3\) nor the ignoreIndex -100/);
    assert.throws(() => rt.nllLoss(logp, int([0])), /the target must have shape \[2\], got \[1\]/);
    assert.throws(() => rt.nllLoss(logp, int([0, 1]), { weight: rt.ones([2]) }), /the weight must have shape \[3\]/);
    assert.throws(() => rt.nllLoss(logp, int([0, 1]), { ignore_index: 1 } as never), /unknown option "ignore_index"; did you mean ignoreIndex\?/);
    assert.throws(() => rt.nllLoss(logp, int([0, 1]), { reduction: "avg" as never }), /reduction must be "mean", "sum" or "none", got "avg"/);
  });

  it("binary cross entropy", () => {
    assert.throws(() => rt.binaryCrossEntropy(rt.tensor([0.5, 1.2]), rt.tensor([0, 1])), /every input must be a probability in \[0, 1\], got 1.2\d* at flat position 1; use binaryCrossEntropyWithLogits/);
    assert.throws(() => rt.binaryCrossEntropy(rt.tensor([0.5]), rt.tensor([0, 1])), /the target \[2\] must have the input's shape \[1\]/);
    assert.throws(() => rt.binaryCrossEntropyWithLogits(rt.zeros([2, 3]), rt.zeros([2, 3]), { pos_weight: rt.ones([3]) } as never), /did you mean posWeight\?/);
    assert.throws(() => rt.binaryCrossEntropyWithLogits(rt.zeros([2, 3]), rt.zeros([2, 3]), { posWeight: rt.ones([2]) }), /posWeight/);
  });

  it("scatter and scatterReduce", () => {
    const x = rt.zeros([2, 3]);
    assert.throws(() => rt.scatter(x, 1, int([[3]]), 1), /scatter: index 3 \(at flat position 0\) is out of range for dim 1 of size 3/);
    assert.throws(() => rt.scatter(x, 1, rt.tensor([[0]]), 1), /scatter: expected an int32 index, got float32/);
    assert.throws(() => rt.scatter(x, 1, int([[0, 1]]), rt.zeros([1, 1])), /src of shape \[1, 1\] must have 2 dims and be at least as large as the index \[1, 2\]/);
    assert.throws(() => rt.scatter(x, 1, int([[0]]), rt.zeros([1, 1], { dtype: "float64" })), /same dtype/);
    assert.throws(() => rt.scatter(x, 1, int([[0]]), 1, { reduce: "mean" as never }), /reduce must be "add" or "multiply"/);
    assert.throws(() => rt.scatterReduce(x, 1, int([[0]]), rt.ones([1, 1]), "max" as never), /reduce must be one of "sum", "prod", "mean", "amax", "amin", got "max"/);
    assert.throws(() => rt.scatterReduce(x, 1, int([[0]]), rt.ones([1, 1]), "sum", { include_self: false } as never), /did you mean includeSelf\?/);
  });

  it("sort and topk", () => {
    assert.throws(() => rt.topk(rt.zeros([2, 3]), 4), /topk: k must be an integer in \[0, 3\]/);
    assert.throws(() => rt.sort(rt.zeros([2]), 1), /dim 1 is out of range/);
    assert.throws(() => rt.sort(rt.zeros([2]), 0, "yes" as never), /descending must be a boolean/);
    assert.throws(() => rt.sort(rt.zeros([2]), 0, false, { stabel: true } as never), /did you mean stable\?/);
  });

  it("cumsum, flip, roll and repeat", () => {
    assert.throws(() => rt.cumsum(rt.zeros([2]), 1), /dim 1 is out of range/);
    assert.throws(() => rt.cumsum(rt.zeros([2]), 0, { dtpe: "float64" } as never), /unknown option "dtpe"/);
    assert.throws(() => rt.flip(rt.zeros([2, 2]), [0, 0]), /flip: dim \[0, 0\] appears more than once/);
    assert.throws(() => rt.roll(rt.zeros([2, 2]), [1, 1], [0]), /roll: shifts and dims must have the same length, got 2 shifts and 1 dims/);
    assert.throws(() => rt.roll(rt.zeros([2, 2]), [1, 1]), /without dims, shifts must be a single number/);
    assert.throws(() => rt.repeat(rt.zeros([2, 2]), 2), /the number of repeat sizes \(1\) cannot be smaller than the number of dims of the tensor \(2\)/);
    assert.throws(() => rt.repeat(rt.zeros([2]), -1), /non-negative integers/);
  });

  it("pad", () => {
    assert.throws(() => rt.pad(rt.zeros([2, 3]), [1]), /pad must be an even-length array of integers/);
    assert.throws(() => rt.pad(rt.zeros([1, 2, 3]), [3, 0], "reflect"), /reflect padding \(3, 0\) must be smaller than dim 2 of size 3/);
    assert.throws(() => rt.pad(rt.zeros([3]), [1, 1], "reflect"), /mode "reflect" pads 1 to 3 trailing dims .* need a 2-d or 3-d input, got \[3\]/);
    assert.throws(() => rt.pad(rt.zeros([1, 2]), [3, 0], "circular"), /circular padding \(3, 0\) may wrap around at most once/);
    assert.throws(() => rt.pad(rt.zeros([1, 2]), [1, 0], "replicate", 2), /mode "replicate" does not take a value/);
    assert.throws(() => rt.pad(rt.zeros([1, 2]), [1, 0], "edge" as never), /mode must be one of "constant", "reflect", "replicate", "circular", got "edge"/);
    assert.throws(() => rt.pad(rt.zeros([2]), [-2, -1]), /pad: padding \(-2, -1\) of dim 0 of size 2 .* leaves a negative size|crops more/);
  });

  it("oneHot", () => {
    assert.throws(() => rt.oneHot(rt.tensor([0, 1])), /oneHot: expected int32 class indices, got float32/);
    assert.throws(() => rt.oneHot(int([0, -1])), /class values must be non-negative, got -1/);
    assert.throws(() => rt.oneHot(int([0, 3]), 3), /class values must be smaller than numClasses \(3\), got 3/);
    assert.throws(() => rt.oneHot(int([])), /cannot infer numClasses from an empty tensor/);
  });

  it("einsum", () => {
    const a = rt.zeros([2, 3]);
    assert.throws(() => rt.einsum("ij,jk->ik", a), /einsum: "ij,jk->ik" has 2 input term\(s\) but 1 operand\(s\) were given/);
    assert.throws(() => rt.einsum("ijk->i", a), /the term "ijk" has 3 subscripts for an operand of 2 dims/);
    assert.throws(() => rt.einsum("ij,jk->ik", a, rt.zeros([4, 2])), /subscript j has size 3 in one operand and 4 in operand 1/);
    assert.throws(() => rt.einsum("ij->iz", a), /output subscript z does not appear in any input/);
    assert.throws(() => rt.einsum("i1->i", rt.zeros([2, 2])), /subscripts must be letters/);
    assert.throws(() => rt.einsum("ij->ii", a), /a subscript appears twice in the output/);
    assert.throws(() => rt.einsum("ii->i", a), /subscript i has size 2 in one operand and 3 in operand 0 \(\[2, 3\]\)/);
  });

  it("any, all and the non-finite checks take any dtype; nanToNum checks its replacements", () => {
    assert.equal(rt.any(int([0, 2])).item(), 1);
    assert.equal(rt.all(rt.tensor([true, false])).item(), 0);
    assert.throws(() => rt.nanToNum(rt.zeros([1]), "0" as never), /nanToNum: nan must be a number, got string/);
  });
});

describe("bfloat16 inputs to the value tests", () => {
  // bfloat16 is storage only: these ops read it as float32, so NaN and −0 are seen as numbers.
  const bf = (v: number[]) => rt.tensor(v).to("bfloat16");
  it("isnan, isinf, isfinite and nanToNum see NaN and ±∞ in bfloat16", () => {
    assert.deepEqual(rt.isnan(bf([1, NaN])).toArray(), [0, 1]);
    assert.deepEqual(rt.isinf(bf([1, -Infinity])).toArray(), [0, 1]);
    assert.deepEqual(rt.isfinite(bf([1, NaN, Infinity])).toArray(), [1, 0, 0]);
    // 3.3895313892515355e38 is bfloat16's largest finite value (torch.finfo(torch.bfloat16).max).
    assert.deepEqual(rt.nanToNum(bf([1, NaN, Infinity])).to("float32").toArray(), [1, 0, 3.3895313892515355e38]);
  });
  it("any and all treat bfloat16 −0 as zero", () => {
    assert.equal(rt.any(bf([-0, 0])).item(), 0);
    assert.equal(rt.all(bf([-0, 1])).item(), 0);
  });
});

describe("scatter_ and scatterReduce_ write in place", () => {
  it("the one-hot idiom zeros.scatter_(1, labels, 1) matches oneHot, and a leaf that requires grad is refused", () => {
    const labels = rt.tensor([[1], [3], [0]], { dtype: "int32" });
    const z = rt.zeros([3, 4]);
    const r = z.scatter_(1, labels, 1);
    assert.equal(r, z);
    assert.deepEqual(z.toArray(), rt.oneHot(labels.view(-1), 4).float().toArray());
    const acc = rt.zeros([2]);
    acc.scatterReduce_(0, rt.tensor([1, 1], { dtype: "int32" }), rt.tensor([2, 3]), "sum");
    assert.deepEqual(acc.toArray(), [0, 5]);
    assert.throws(() => rt.zeros([2], { requiresGrad: true }).scatter_(0, rt.tensor([0], { dtype: "int32" }), 1), /scatter_: an in-place op on a tensor that requires grad/);
  });
});
