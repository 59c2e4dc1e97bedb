import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { assertClose } from "../helpers.js";

const grid = () => rt.arange(24, undefined, 1, { dtype: "float32" }).view(2, 3, 4);

test("views share storage; contiguous copies only when needed", () => {
  const x = grid();
  for (const v of [x.view(6, 4), x.reshape(4, 6), x.transpose(0, 2), x.permute(2, 0, 1), x.narrow(2, 1, 2), x.unsqueeze(0), x.select(1, 1), x.slice(2, 0, 4, 2)]) {
    assert.equal(v.storage, x.storage);
  }
  assert.equal(x.contiguous(), x);
  const t = x.transpose(1, 2);
  assert.equal(t.isContiguous(), false);
  const c = t.contiguous();
  assert.notEqual(c.storage, x.storage);
  assert.equal(c.isContiguous(), true);
  assertClose(c, t.toArray());
});

test("view values follow PyTorch's indexing", () => {
  const x = grid();
  assertClose(x.transpose(0, 2).select(0, 1), [[1, 13], [5, 17], [9, 21]]);
  assertClose(x.permute(1, 0, 2).narrow(0, 2, 1).reshape(-1), [8, 9, 10, 11, 20, 21, 22, 23]);
  assertClose(x.slice(2, 1, undefined, 2).select(0, 0), [[1, 3], [5, 7], [9, 11]]);
  assertClose(x.slice(2, -2).select(0, 1).select(0, 2), [22, 23]);
  assertClose(rt.tensor([1, 2, 3]).unsqueeze(1).expand(3, 2), [[1, 1], [2, 2], [3, 3]]);
  assert.deepEqual(x.unsqueeze(-1).shape, [2, 3, 4, 1]);
  assert.deepEqual(x.unsqueeze(-1).squeeze().shape, [2, 3, 4]);
  assert.deepEqual(x.flatten(1).shape, [2, 12]);
});

test("writes through a view are seen by the base tensor", () => {
  const x = rt.zeros([2, 3]);
  x.select(0, 1).fill_(7);
  assertClose(x, [[0, 0, 0], [7, 7, 7]]);
});

test("view refuses incompatible strides, reshape copies instead", () => {
  const t = grid().transpose(0, 1);
  assert.throws(() => t.view(-1), /cannot be viewed as \[24\] without a copy; use reshape/);
  assertClose(t.reshape(-1).narrow(0, 0, 4), [0, 1, 2, 3]);
  assert.throws(() => grid().view(5, -1), /invalid for input of size 24/);
  assert.throws(() => grid().view(-1, -1), /only one dimension can be -1/);
});

test("gradients flow through views back to the base", () => {
  const x = rt.arange(6, undefined, 1, { dtype: "float32" }).view(2, 3).clone().requiresGrad_();
  x.transpose(0, 1).slice(0, 1).narrow(1, 1, 1).mul(rt.tensor([[2], [3]])).sum().backward();
  assertClose(x.grad!, [[0, 0, 0], [0, 2, 3]]);
  const y = rt.tensor([1, 2, 3], { requiresGrad: true });
  y.unsqueeze(0).expand(4, 3).sum().backward();
  assertClose(y.grad!, [4, 4, 4]);
});

test("errors name the op and the offending shapes", () => {
  assert.throws(() => rt.tensor([1, 2]).add(rt.tensor([1, 2, 3])), /add: shapes \[2\] and \[3\] cannot be broadcast/);
  assert.throws(() => rt.zeros([2, 3]).matmul(rt.zeros([4, 5])), /matmul: .*\[2, 3\] @ \[4, 5\]/);
  assert.throws(() => grid().transpose(0, 3), /transpose: dim 3 is out of range/);
  assert.throws(() => grid().select(1, 3), /select: index 3 is out of range for dim 1 of size 3/);
  assert.throws(() => rt.zeros([3]).indexSelect(0, [0, 3]), /indexSelect: index 3 .* out of range/);
  assert.throws(() => rt.zeros([2]).item(), /only a tensor with one element/);
  assert.throws(() => rt.zeros([2, -1]), /non-negative integer sizes/);
});
