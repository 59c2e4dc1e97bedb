import { test } from "node:test";
import * as rt from "../../src/index.js";
import { nativeUnavailableReason } from "../../src/backend/index.js";
import { assertClose } from "../helpers.js";

/**
 * Every op through the public API on both backends, over random shapes including broadcasting,
 * non-contiguous views, and empty and size-1 dims: the native `cpu` backend must agree with the
 * plain-TypeScript `reference` oracle, forward and backward.
 */
const skip = nativeUnavailableReason() ? `native addon unavailable: ${nativeUnavailableReason()}` : false;

const g = new rt.Generator(2024);
const randShape = (ndim: number, allowEmpty = true) =>
  Array.from({ length: ndim }, () => {
    const r = g.random();
    return allowEmpty && r < 0.08 ? 0 : r < 0.3 ? 1 : 1 + g.randint(1, 9);
  });

/** A random tensor of `shape`, sometimes handed over as a transposed or sliced view. */
function randomInput(shape: number[], dtype: "float32" | "float64" = "float32"): rt.Tensor {
  const kind = g.randint(0, 3);
  if (kind === 1 && shape.length >= 2) {
    const swapped = [...shape];
    [swapped[0], swapped[shape.length - 1]] = [swapped[shape.length - 1], swapped[0]];
    return rt.randn(swapped, { dtype, generator: g }).transpose(0, shape.length - 1);
  }
  if (kind === 2 && shape.length >= 1) {
    const wider = [...shape];
    wider[shape.length - 1] = shape[shape.length - 1] * 2 + 1;
    return rt.randn(wider, { dtype, generator: g }).slice(-1, 1, undefined, 2).narrow(-1, 0, shape[shape.length - 1]);
  }
  return rt.randn(shape, { dtype, generator: g });
}

/** Runs fn on both backends with identical (cloned) inputs; compares outputs and input gradients. */
function compare(name: string, inputs: rt.Tensor[], fn: (...xs: rt.Tensor[]) => rt.Tensor, tol = 1e-4): void {
  const run = (backend: "cpu" | "reference") =>
    rt.withBackend(backend, () => {
      const xs = inputs.map((x) => x.detach().requiresGrad_(x.dtype === "float32" || x.dtype === "float64"));
      const y = fn(...xs);
      if (y.requiresGrad && y.numel > 0) y.mul(rt.randn(y.shape, { generator: new rt.Generator(5) })).sum().backward();
      return { y, grads: xs.map((x) => x.grad) };
    });
  const ref = run("reference");
  const cpu = run("cpu");
  assertClose(cpu.y, ref.y, tol, tol, `${name} forward ${inputs.map((x) => `[${x.shape}]`).join(" ")}`);
  cpu.grads.forEach((gr, i) => {
    if (gr || ref.grads[i]) assertClose(gr!, ref.grads[i]!, tol, tol, `${name} grad of input ${i}`);
  });
}

test("elementwise ops with broadcasting agree between cpu and reference", { skip }, () => {
  const binary: [string, (a: rt.Tensor, b: rt.Tensor) => rt.Tensor][] = [
    ["add", (a, b) => a.add(b)],
    ["sub", (a, b) => a.sub(b)],
    ["mul", (a, b) => a.mul(b)],
    ["div", (a, b) => a.div(b.abs().add(0.5))],
    ["maximum", (a, b) => a.maximum(b)],
    ["where", (a, b) => rt.where(a.gt(b), a, b.mul(2))],
    ["pow", (a, b) => a.abs().add(0.1).pow(b)],
  ];
  for (let trial = 0; trial < 12; trial++) {
    const shape = randShape(g.randint(0, 4));
    const other = shape.map((d) => (g.random() < 0.3 ? 1 : d)).slice(g.randint(0, Math.max(1, shape.length)));
    for (const [name, fn] of binary) compare(name, [randomInput(shape), randomInput(other)], fn);
  }
});

test("unary ops agree between cpu and reference", { skip }, () => {
  const unary: [string, (x: rt.Tensor) => rt.Tensor][] = [
    ["neg", (x) => x.neg()],
    ["exp", (x) => x.exp()],
    ["log", (x) => x.abs().add(0.1).log()],
    ["sqrt", (x) => x.abs().add(0.1).sqrt()],
    ["rsqrt", (x) => x.abs().add(0.1).rsqrt()],
    ["tanh", (x) => x.tanh()],
    ["sigmoid", (x) => x.sigmoid()],
    ["relu", (x) => x.relu()],
    ["gelu", (x) => x.gelu()],
    ["gelu_tanh", (x) => x.gelu("tanh")],
    ["silu", (x) => x.silu()],
    ["clamp", (x) => x.clamp(-0.5, 0.7)],
    ["pow_scalar", (x) => x.pow(3)],
    ["abs", (x) => x.abs()],
  ];
  for (let trial = 0; trial < 6; trial++) {
    const x = randomInput(randShape(g.randint(0, 4)));
    for (const [name, fn] of unary) compare(name, [x], fn);
  }
});

test("matmul, linear and reductions agree between cpu and reference", { skip }, () => {
  for (let trial = 0; trial < 10; trial++) {
    const [m, k, n] = [g.randint(1, 40), g.randint(1, 40), g.randint(1, 40)];
    const batch = randShape(g.randint(0, 3), false);
    compare("matmul", [randomInput([...batch, m, k]), randomInput([k, n])], (a, b) => a.matmul(b), 1e-3);
    compare("bmm-broadcast", [randomInput([m, k]), randomInput([...batch, k, n])], (a, b) => a.matmul(b), 1e-3);
    compare("linear", [randomInput([...batch, m, k]), randomInput([n, k]), randomInput([n])], (x, w, b) => x.linear(w, b), 1e-3);
    compare("matvec", [randomInput([m, k]), randomInput([k])], (a, b) => a.matmul(b), 1e-3);
    const shape = randShape(g.randint(1, 4));
    const dim = g.randint(0, shape.length);
    compare("sum", [randomInput(shape)], (x) => x.sum(dim, g.random() < 0.5), 1e-3);
    compare("mean", [randomInput(shape)], (x) => x.mean(), 1e-3);
  }
});
