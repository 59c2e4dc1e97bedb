import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import { assertClose } from "../helpers.js";

test("creation functions give the requested shapes, dtypes and values", () => {
  assert.deepEqual(rt.zeros([2, 3]).toArray(), [[0, 0, 0], [0, 0, 0]]);
  assert.deepEqual(rt.ones(2, { dtype: "int32" }).toArray(), [1, 1]);
  assert.deepEqual(rt.full([2], 2.5, { dtype: "float64" }).toArray(), [2.5, 2.5]);
  assert.equal(rt.arange(5).dtype, "int32");
  assert.deepEqual(rt.arange(1, 2, 0.25).toArray(), [1, 1.25, 1.5, 1.75]);
  assert.deepEqual(rt.arange(5, 0, -2).toArray(), [5, 3, 1]);
  assert.equal(rt.tensor([true, false]).dtype, "bool");
  assert.equal(rt.tensor(new Float64Array([1, 2])).dtype, "float64");
  assert.equal(rt.zerosLike(rt.ones([2], { dtype: "float64" })).dtype, "float64");
  assert.deepEqual(rt.empty([0, 3]).shape, [0, 3]);
  assert.equal(rt.tensor(3).item(), 3);
  assert.deepEqual(rt.tensor([[1, 2], [3, 4]], { dtype: "int32" }).toArray(), [[1, 2], [3, 4]]);
  assert.throws(() => rt.tensor([[1, 2], [3]]), /ragged/);
});

test("dtype conversions round and truncate as PyTorch does", () => {
  assert.deepEqual(rt.tensor([1.7, -1.7, 2.5]).to("int32").toArray(), [1, -1, 2]);
  // bfloat16 keeps 8 bits of mantissa: 1 + 2^-9 rounds to 1 (ties to even), 1 + 3·2^-9 rounds up.
  assertClose(rt.tensor([1 + 2 ** -9, 1 + 3 * 2 ** -9, -3.140625]).to("bfloat16").to("float32"), [1, 1 + 2 ** -7, -3.140625], 0, 0);
  assert.deepEqual(rt.tensor([0, 2, -1]).to("bool").toArray(), [0, 1, 1]);
  assert.equal(rt.tensor([1, 2], { dtype: "int32" }).add(0.5).dtype, "float32");
  assert.equal(rt.tensor([1, 2]).add(rt.tensor([1, 2], { dtype: "float64" })).dtype, "float64");
});

test("a seeded generator reproduces its stream and its state round-trips", () => {
  rt.manualSeed(1234);
  const a = rt.randn([5]).toArray();
  rt.manualSeed(1234);
  assert.deepEqual(rt.randn([5]).toArray(), a);
  const g = new rt.Generator(7);
  g.random();
  const state = g.getState();
  const next = [g.random(), g.normal(), g.normal()];
  g.setState(state);
  assert.deepEqual([g.random(), g.normal(), g.normal()], next);
});

test("random distributions have the right moments and ranges", () => {
  const g = new rt.Generator(42);
  const n = rt.randn([20000], { generator: g, dtype: "float64" });
  assert.ok(Math.abs(n.mean().item()) < 0.03);
  assert.ok(Math.abs(n.square().mean().item() - 1) < 0.05);
  const u = rt.rand([20000], { generator: g }).data();
  assert.ok(u.every((v) => v >= 0 && v < 1));
  const r = rt.randint(3, 7, [2000], { generator: g }).data();
  assert.deepEqual([...new Set(r)].sort(), [3, 4, 5, 6]);
});

test("toString reads like PyTorch's", () => {
  assert.equal(rt.tensor([[1, 2], [3, 4]]).toString(), "tensor([[1.0000, 2.0000],\n        [3.0000, 4.0000]])");
  assert.equal(rt.tensor([1, 2], { dtype: "int32" }).toString(), "tensor([1, 2], dtype=int32)");
  assert.match(rt.tensor([1], { requiresGrad: true }).mul(2).toString(), /gradFn=<MulBackward>/);
  assert.match(rt.zeros([2000]).toString(), /0\.0000, \.\.\., 0\.0000/);
});

test("data() exposes the live memory of a contiguous tensor", () => {
  const t = rt.zeros([3]);
  const d = t.data();
  d[1] = 5;
  assert.deepEqual(t.toArray(), [0, 5, 0]);
  assert.ok(t.storage.data.buffer instanceof SharedArrayBuffer);
});
