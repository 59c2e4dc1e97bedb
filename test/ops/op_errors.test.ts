// Bad arguments give errors that name the op, what was expected and what came.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { embedding } from "../../src/ops/embedding.js";
import { argmax, argmin, max, min } from "../../src/ops/extrema.js";
import { gather, scatterAdd } from "../../src/ops/gather.js";
import { cat, chunk, split, stack } from "../../src/ops/join.js";
import { crossEntropy, mseLoss } from "../../src/ops/loss.js";
import { layerNorm } from "../../src/ops/norm.js";
import { softmax } from "../../src/ops/softmax.js";
import { std, variance } from "../../src/ops/statistics.js";
import { tril } from "../../src/ops/triangle.js";

const int = (v: number[][] | number[]) => rt.tensor(v, { dtype: "int32" });

describe("op argument errors", () => {
  it("gather and scatterAdd check the index", () => {
    const x = rt.zeros([2, 3]);
    assert.throws(() => gather(x, 1, int([[3]])), /gather: index 3 .* out of range for dim 1 of size 3/);
    assert.throws(() => gather(x, 1, int([[0], [1], [2]])), /gather: the index of shape \[3, 1\] must have 2 dims and be no larger than \[2, 3\]/);
    assert.throws(() => gather(x, 0, rt.tensor([[0]])), /gather: expected an int32 index, got float32/);
    assert.throws(() => scatterAdd(x, 0, int([[0, 1]]), rt.zeros([1, 1])), /scatterAdd: src of shape \[1, 1\] must be at least as large as the index \[1, 2\]/);
  });

  it("max, min and argmax refuse empty reductions", () => {
    assert.throws(() => max(rt.zeros([0, 2])), /max: the tensor is empty .*\[0, 2\].*pass a dim/);
    assert.throws(() => min(rt.zeros([0, 2]), 0), /min: cannot reduce dim 0 of size 0/);
    assert.throws(() => argmax(rt.zeros([2, 2]), 2), /argmax: dim 2 is out of range/);
  });

  it("cat and stack name the mismatching tensor", () => {
    assert.throws(() => cat([rt.zeros([2, 3]), rt.zeros([3, 2])], 0), /cat: tensors\[1\] has shape \[3, 2\] but tensors\[0\] has \[2, 3\]; all sizes must match except along dim 0/);
    assert.throws(() => cat([], 0), /cat: expected a non-empty array of tensors/);
    assert.throws(() => stack([rt.zeros([2]), rt.zeros([3])]), /stack: every tensor must have the same shape; tensors\[1\] has \[3\]/);
  });

  it("split and chunk check their sizes", () => {
    assert.throws(() => split(rt.zeros([5]), [2, 2]), /split: the sections \[2, 2\] must be non-negative integers adding up to 5/);
    assert.throws(() => split(rt.zeros([5]), 0), /split: the split size must be a positive integer, got 0/);
    assert.throws(() => chunk(rt.zeros([5]), 0), /chunk: the number of chunks must be a positive integer, got 0/);
  });

  it("layerNorm, softmax and tril check shapes and dims", () => {
    assert.throws(() => layerNorm(rt.zeros([2, 3]), [4]), /layerNorm: normalizedShape \[4\] must be the trailing dims of the input, got input shape \[2, 3\]/);
    assert.throws(() => layerNorm(rt.zeros([2, 3]), [3], rt.zeros([2])), /layerNorm: the weight must have shape \[3\], got \[2\]/);
    assert.throws(() => softmax(rt.zeros([2, 3]), 2), /softmax: dim 2 is out of range/);
    assert.throws(() => softmax(int([1, 2]), 0), /softmax: expected a float32 or float64 tensor, got int32/);
    assert.throws(() => tril(rt.zeros([3])), /tril: expected a tensor of at least 2 dims .* got shape \[3\]/);
  });

  it("embedding checks indices and paddingIdx", () => {
    const w = rt.zeros([4, 2]);
    assert.throws(() => embedding(int([4]), w), /embedding: index 4 .* out of range for a dim of size 4/);
    assert.throws(() => embedding(int([0]), w, { paddingIdx: 4 }), /embedding: paddingIdx 4 must be within \[-4, 3\] for 4 embeddings/);
  });

  it("crossEntropy and mseLoss check targets and shapes", () => {
    const logits = rt.zeros([2, 3]);
    assert.throws(() => crossEntropy(logits, int([0, 3])), /crossEntropy: target 3 .* is not a class index in \[0, 3\) nor the ignoreIndex -100/);
    assert.throws(() => crossEntropy(logits, int([0, 1, 2])), /crossEntropy: for logits of shape \[2, 3\] the target must have shape \[2\], got \[3\]/);
    assert.throws(() => crossEntropy(logits, int([0, 1]), { reduction: "avg" as "mean" }), /crossEntropy: reduction must be "mean", "sum" or "none", got "avg"/);
    assert.throws(() => mseLoss(rt.zeros([2]), rt.zeros([3])), /mseLoss: shapes \[2\] and \[3\] cannot be broadcast together/);
  });

  it("var refuses both correction and unbiased", () => {
    assert.throws(() => variance(rt.zeros([3]), 0, { correction: 1, unbiased: true }), /var: pass either correction or unbiased, not both/);
  });
});

describe("ops checked against one-line references", () => {
  it("argmin is the argmax of the negation, and min the negated max", () => {
    const x = rt.tensor([[3, -1, 2], [0, 5, -4]]);
    assert.deepEqual(argmin(x, 1).toArray(), argmax(x.neg(), 1).toArray());
    assert.deepEqual(argmin(x).toArray(), 5);
    assert.deepEqual(min(x, 0, true).values.toArray(), [[0, -1, -4]]);
  });

  it("std is the square root of the variance", () => {
    const x = rt.tensor([1, 2, 4, 7]);
    // mean 3.5, squared deviations 6.25 + 2.25 + 0.25 + 12.25 = 21, unbiased variance 7
    assert.ok(Math.abs(std(x).item() - Math.sqrt(7)) < 1e-6);
    assert.ok(Math.abs(x.std(0, { unbiased: false }).item() - Math.sqrt(21 / 4)) < 1e-6);
  });

  it("methods are installed on Tensor", () => {
    const x = rt.tensor([[1, 5], [7, 2]]);
    assert.deepEqual(x.max(1).indices.toArray(), [1, 0]);
    assert.equal(x.max().item(), 7);
    assert.deepEqual(x.argmax(0).toArray(), [1, 0]);
    assert.ok(Math.abs(x.softmax(1).sum().item() - 2) < 1e-6);
    assert.deepEqual(x.tril().toArray(), [[1, 0], [7, 2]]);
    assert.deepEqual(x.triu(1).toArray(), [[0, 5], [0, 0]]);
    assert.deepEqual(x.gather(1, int([[1], [0]])).toArray(), [[5], [7]]);
    assert.deepEqual(x.split(1, 1).map((t) => t.toArray()), [[[1], [7]], [[5], [2]]]);
    assert.equal(x.chunk(2).length, 2);
    // mean 3.75, squared deviations 7.5625 + 1.5625 + 10.5625 + 3.0625 = 22.75, over N − 1 = 3
    assert.ok(Math.abs(x.var().item() - 22.75 / 3) < 1e-6);
    assert.ok(Math.abs(x.logSoftmax(0).exp().sum().item() - 2) < 1e-6);
    assert.deepEqual(x.scatterAdd(0, int([[1, 1]]), rt.ones([1, 2])).toArray(), [[1, 5], [8, 3]]);
  });
});
