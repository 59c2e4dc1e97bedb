// The 2-D product's fast path (ops/matmul.ts plainProduct: no grad, no autocast): every layout it
// accepts (views with an offset, transposed operands, row and column vectors, empty sizes) against
// a float64 triple loop over the operands' values, and the calls it must leave to the general path.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";

type Matrix = number[][];

function naive(a: Matrix, b: Matrix, n: number): Matrix {
  return a.map((row) => Array.from({ length: n }, (_, j) => row.reduce((s, v, p) => s + v * b[p][j], 0)));
}

function assertClose(got: rt.Tensor, a: rt.Tensor, b: rt.Tensor, what: string): void {
  const m = a.shape[0];
  const n = b.shape[1];
  assert.deepEqual([...got.shape], [m, n], `${what}: shape`);
  const want = naive(a.toArray() as Matrix, b.toArray() as Matrix, n);
  const values = got.toArray() as Matrix;
  const tol = a.dtype === "float64" ? 1e-12 : 2e-5;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      const err = Math.abs(values[i][j] - want[i][j]);
      assert.ok(err <= tol * (1 + Math.abs(want[i][j])), `${what}: [${i}, ${j}] is ${values[i][j]}, expected ${want[i][j]}`);
    }
  }
}

test("plain 2-D products match a float64 triple loop for every layout", () => {
  rt.manualSeed(7);
  for (const dtype of ["float32", "float64"] as const) {
    const big = rt.randn([40, 50], { dtype });
    const cases: [string, rt.Tensor, rt.Tensor][] = [
      ["dense 32×32", rt.randn([32, 32], { dtype }), rt.randn([32, 32], { dtype })],
      ["rectangular", rt.randn([7, 13], { dtype }), rt.randn([13, 5], { dtype })],
      ["transposed a", rt.randn([13, 7], { dtype }).transpose(0, 1), rt.randn([13, 5], { dtype })],
      ["transposed b", rt.randn([7, 13], { dtype }), rt.randn([5, 13], { dtype }).transpose(0, 1)],
      ["views at an offset", big.narrow(0, 3, 9).narrow(1, 4, 11), big.narrow(0, 20, 11).narrow(1, 30, 6)],
      ["row vector", rt.randn([1, 9], { dtype }), rt.randn([9, 4], { dtype })],
      ["column result", rt.randn([6, 9], { dtype }), rt.randn([9, 1], { dtype })],
      ["outer product", rt.randn([5, 1], { dtype }), rt.randn([1, 3], { dtype })],
      ["k = 0", rt.randn([4, 0], { dtype }), rt.randn([0, 3], { dtype })],
      ["m = 0", rt.randn([0, 5], { dtype }), rt.randn([5, 3], { dtype })],
    ];
    for (const [what, a, b] of cases) {
      assertClose(a.matmul(b), a, b, `${dtype} ${what}`);
      // The same size again: the output shares the first one's layout arrays, not its memory.
      const first = a.matmul(b);
      const second = a.matmul(b);
      assert.notEqual(first.storage, second.storage, `${what}: two products share memory`);
      assertClose(second, a, b, `${dtype} ${what}, repeated`);
    }
  }
});

test("a product with no unit stride is copied first, and the result is right", () => {
  const everyOther = rt.randn([6, 16]).reshape([6, 8, 2]).select(2, 0); // strides [16, 2]
  const a = rt.randn([5, 6]);
  const b = rt.randn([8, 4]);
  assertClose(a.matmul(everyOther), a, everyOther, "b without a unit stride");
  const c = rt.randn([6, 3]);
  assertClose(everyOther.transpose(0, 1).matmul(c), everyOther.transpose(0, 1), c, "a transposed without a unit stride");
  assertClose(everyOther.matmul(b), everyOther, b, "a without a unit stride");
});

test("products that need a graph, autocast or a broadcast still go through the general path", () => {
  const w = rt.randn([4, 3]).requiresGrad_();
  const x = rt.randn([2, 4]);
  const y = x.matmul(w);
  assert.ok(y.gradFn, "a product with an operand requiring grad records its node");
  y.sum().backward();
  assertClose(w.grad!, x.transpose(0, 1), rt.ones([2, 3]), "the gradient of w");
  rt.noGrad(() => assert.equal(x.matmul(w).gradFn, null, "under noGrad nothing is recorded"));
  const batched = rt.randn([2, 3, 4]).matmul(rt.randn([4, 5]));
  assert.deepEqual([...batched.shape], [2, 3, 5]);
  assert.throws(() => rt.randn([3, 4]).matmul(rt.randn([5, 2])), /inner dimensions do not match/);
  assert.throws(() => rt.randn([3, 4]).matmul(rt.randn([4, 2], { dtype: "float64" })), /dtype/);
});
