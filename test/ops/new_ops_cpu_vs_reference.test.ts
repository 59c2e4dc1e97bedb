import assert from "node:assert/strict";
import { test } from "node:test";
import * as rt from "../../src/index.js";
import { nativeUnavailableReason } from "../../src/backend/index.js";
import { assertClose } from "../helpers.js";

/**
 * The ops on the backend primitives added with them (unaryMath, atan2, sort, cumulative,
 * scatterReduce): the native `cpu` backend must agree with the `reference` oracle, forward and
 * backward, over random shapes with empty and size-1 dims, non-contiguous inputs, ties and NaN.
 */
const skip = nativeUnavailableReason() ? `native addon unavailable: ${nativeUnavailableReason()}` : false;

const g = new rt.Generator(4242);
const randShape = (ndim: number) =>
  Array.from({ length: ndim }, () => {
    const r = g.random();
    return r < 0.08 ? 0 : r < 0.3 ? 1 : 1 + g.randint(1, 9);
  });

/** A random tensor of shape, sometimes a transposed view; `ties` rounds values so that many repeat. */
function randomInput(shape: number[], dtype: "float32" | "float64" = "float32", ties = false): rt.Tensor {
  const make = (s: number[]) => {
    const t = rt.randn(s, { dtype, generator: g });
    return ties ? t.mul(2).clamp(-2, 2).to("int32").to(dtype) : t;
  };
  if (g.random() < 0.4 && shape.length >= 2) {
    const swapped = [...shape];
    [swapped[0], swapped[shape.length - 1]] = [swapped[shape.length - 1], swapped[0]];
    return make(swapped).transpose(0, shape.length - 1);
  }
  return make(shape);
}

function compare(name: string, inputs: rt.Tensor[], fn: (...xs: rt.Tensor[]) => rt.Tensor | rt.Tensor[], tol = 1e-5): void {
  const run = (backend: "cpu" | "reference") =>
    rt.withBackend(backend, () => {
      const xs = inputs.map((x) => x.detach().requiresGrad_(x.dtype === "float32" || x.dtype === "float64"));
      const out = fn(...xs);
      const ys = Array.isArray(out) ? out : [out];
      const y = ys[0];
      if (y.requiresGrad && y.numel > 0) y.mul(rt.randn(y.shape, { generator: new rt.Generator(5), dtype: y.dtype })).sum().backward();
      return { ys, grads: xs.map((x) => x.grad) };
    });
  const ref = run("reference");
  const cpu = run("cpu");
  cpu.ys.forEach((y, i) => assertClose(y, ref.ys[i], tol, tol, `${name} output ${i} ${inputs.map((x) => `[${x.shape}]`).join(" ")}`));
  cpu.grads.forEach((gr, i) => {
    if (gr || ref.grads[i]) assertClose(gr!, ref.grads[i]!, tol, tol, `${name} grad of input ${i}`);
  });
}

test("trigonometric and hyperbolic functions agree between cpu and reference", { skip }, () => {
  const inUnit = (x: rt.Tensor) => x.tanh().mul(0.95);
  const unary: [string, (x: rt.Tensor) => rt.Tensor][] = [
    ["sin", (x) => x.sin()],
    ["cos", (x) => x.cos()],
    ["tan", (x) => x.tanh().tan()],
    ["asin", (x) => inUnit(x).asin()],
    ["acos", (x) => inUnit(x).acos()],
    ["atan", (x) => x.atan()],
    ["sinh", (x) => x.sinh()],
    ["cosh", (x) => x.cosh()],
    ["asinh", (x) => x.asinh()],
    ["acosh", (x) => x.abs().add(1.1).acosh()],
    ["atanh", (x) => inUnit(x).atanh()],
    ["log1p", (x) => x.abs().log1p()],
    ["expm1", (x) => x.expm1()],
  ];
  for (let trial = 0; trial < 6; trial++) {
    for (const dtype of ["float32", "float64"] as const) {
      const x = randomInput(randShape(g.randint(0, 4)), dtype);
      for (const [name, fn] of unary) compare(name, [x], fn);
    }
  }
  // Outside the domain both give NaN; at the poles both give ±∞.
  compare("edges", [rt.tensor([2, -2, 1, -1, 0, Infinity, -Infinity, NaN])], (x) => [x.asin(), x.acos(), x.atanh(), x.acosh(), x.log1p().neg().neg()]);
});

test("atan2 with broadcasting agrees between cpu and reference", { skip }, () => {
  for (let trial = 0; trial < 10; trial++) {
    const shape = randShape(g.randint(0, 4));
    const other = shape.map((d) => (g.random() < 0.3 ? 1 : d)).slice(g.randint(0, Math.max(1, shape.length)));
    compare("atan2", [randomInput(shape), randomInput(other)], (a, b) => rt.atan2(a, b));
  }
});

test("sort, argsort and topk agree between cpu and reference, ties and NaN included", { skip }, () => {
  for (let trial = 0; trial < 12; trial++) {
    const shape = randShape(g.randint(1, 4));
    const dim = g.randint(0, shape.length);
    const descending = g.random() < 0.5;
    const raw = randomInput(shape, trial % 2 ? "float64" : "float32", true);
    // One NaN (flat position 1) in each tensor large enough to hold it.
    const x = rt.where(rt.arange(raw.numel).reshape(raw.shape).eq(1), NaN, raw);
    compare("sort", [x], (t) => {
      const r = t.sort(dim, descending, { stable: true });
      return [r.values, r.indices];
    });
    compare("argsort int32", [x.detach().nanToNum().to("int32")], (t) => rt.argsort(t, dim, descending));
    const k = g.randint(0, shape[dim] + 1);
    compare("topk", [x], (t) => {
      const r = t.topk(k, dim, descending);
      return [r.values, r.indices];
    });
  }
});

test("cumsum and cumprod agree between cpu and reference", { skip }, () => {
  for (let trial = 0; trial < 10; trial++) {
    const shape = randShape(g.randint(0, 4));
    const dim = shape.length === 0 ? 0 : g.randint(0, shape.length);
    compare("cumsum", [randomInput(shape)], (x) => x.cumsum(dim));
    compare("cumprod", [randomInput(shape, "float64", trial % 3 === 0)], (x) => x.cumprod(dim), 1e-9);
    compare("cumsum int32", [randomInput(shape, "float32", true).to("int32")], (x) => x.cumsum(dim));
  }
});

test("scatterReduce agrees between cpu and reference for every reduction", { skip }, () => {
  for (let trial = 0; trial < 8; trial++) {
    const shape = randShape(g.randint(1, 4)).map((s) => Math.max(s, 1));
    const dim = g.randint(0, shape.length);
    const indexShape = shape.map((s, i) => (i === dim ? g.randint(1, 6) : g.randint(1, s + 1)));
    const index = rt.randint(0, shape[dim], indexShape, { generator: g });
    for (const reduce of ["sum", "prod", "mean", "amax", "amin"] as const) {
      for (const includeSelf of [true, false]) {
        compare(`scatterReduce ${reduce}`, [randomInput(shape, "float64", true), randomInput(indexShape, "float64")], (x, s) =>
          rt.scatterReduce(x, dim, index, s, reduce, { includeSelf }),
        1e-9);
      }
    }
    compare("scatter", [randomInput(shape), randomInput(indexShape)], (x, s) => rt.scatter(x, dim, index, s));
    compare("scatter int32 sum", [randomInput(shape, "float32", true).to("int32"), randomInput(indexShape, "float32", true).to("int32")], (x, s) =>
      rt.scatterReduce(x, dim, index, s, "sum"),
    );
  }
});

test("int32 running sums and scatter sums wrap around identically on both backends", { skip }, () => {
  const big = rt.tensor([2147483647, 1, 2147483647], { dtype: "int32" });
  const expected = [2147483647, -2147483648, -1];
  for (const backend of ["cpu", "reference"] as const) {
    rt.withBackend(backend, () => {
      assert.deepEqual(rt.cumsum(big, 0).toArray(), expected, `${backend} cumsum`);
      const s = rt.scatterReduce(rt.tensor([2147483647], { dtype: "int32" }), 0, rt.tensor([0], { dtype: "int32" }), rt.tensor([1], { dtype: "int32" }), "sum");
      assert.deepEqual(s.toArray(), [-2147483648], `${backend} scatterReduce`);
    });
  }
});
