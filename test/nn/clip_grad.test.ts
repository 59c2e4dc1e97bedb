// Gradient clipping against one-line references over the concatenated gradients.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { tensor } from "../../src/ops/index.js";

function withGrads(...grads: number[][]): nn.Parameter[] {
  return grads.map((g) => {
    const p = new nn.Parameter(tensor(g.map(() => 0)));
    p.grad = tensor(g);
    return p;
  });
}

const all = (ps: nn.Parameter[]) => ps.flatMap((p) => p.grad!.toArray() as number[]);
const close = (a: number, e: number, tol = 1e-6) => Math.abs(a - e) <= tol * Math.max(1, Math.abs(e));

describe("clipGradNorm", () => {
  it("returns the total 2-norm and scales every gradient by maxNorm / norm", () => {
    const ps = withGrads([3, 4], [12]);
    const norm = nn.utils.clipGradNorm(ps, 6.5).item();
    assert.ok(close(norm, 13));
    const scale = 6.5 / (13 + 1e-6);
    all(ps).forEach((v, i) => assert.ok(close(v, [3, 4, 12][i] * scale), `element ${i}: ${v}`));
  });

  it("leaves gradients alone when already within maxNorm", () => {
    const ps = withGrads([0.3, 0.4]);
    assert.ok(close(nn.utils.clipGradNorm(ps, 1).item(), 0.5));
    assert.deepEqual(all(ps), [Math.fround(0.3), Math.fround(0.4)]);
  });

  it("supports the infinity norm and other p-norms", () => {
    assert.ok(close(nn.utils.clipGradNorm(withGrads([1, -7], [2]), 100, { normType: Infinity }).item(), 7));
    assert.ok(close(nn.utils.clipGradNorm(withGrads([1, -2], [3]), 100, { normType: 1 }).item(), 6));
    assert.ok(close(nn.utils.clipGradNorm(withGrads([1, -2], [3]), 100, { normType: 3 }).item(), Math.cbrt(36), 1e-6));
  });

  it("errorIfNonfinite refuses a NaN or infinite norm, naming it", () => {
    assert.throws(() => nn.utils.clipGradNorm(withGrads([1, NaN]), 1, { errorIfNonfinite: true }), /total norm of order 2 of the gradients is NaN/);
    assert.throws(() => nn.utils.clipGradNorm(withGrads([Infinity]), 1, { errorIfNonfinite: true }), /is Infinity/);
  });

  it("skips parameters without gradients", () => {
    const [a] = withGrads([5]);
    const b = new nn.Parameter(tensor([1]));
    assert.ok(close(nn.utils.clipGradNorm([a, b], 10).item(), 5));
  });
});

describe("clipGradValue", () => {
  it("clamps every element into [-v, v]", () => {
    const ps = withGrads([-3, 0.5], [2]);
    nn.utils.clipGradValue(ps, 1);
    assert.deepEqual(all(ps), [-1, 0.5, 1]);
  });
});

describe("parametersToVector / vectorToParameters", () => {
  it("flatten and restore parameters in order", () => {
    const m = new nn.Linear(2, 2);
    const v = nn.utils.parametersToVector(m.parameters());
    assert.deepEqual(v.toArray(), [...(m.weight.toArray() as number[][]).flat(), ...(m.bias!.toArray() as number[])]);
    nn.utils.vectorToParameters(tensor([1, 2, 3, 4, 5, 6]), m.parameters());
    assert.deepEqual(m.weight.toArray(), [[1, 2], [3, 4]]);
    assert.deepEqual(m.bias!.toArray(), [5, 6]);
  });
});
