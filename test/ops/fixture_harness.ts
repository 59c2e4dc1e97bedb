// Checks ops against the PyTorch fixtures in test/fixtures/ops (made by tools/gen_op_fixtures.py):
// outputs and input gradients for PyTorch's upstream gradient on every backend that loads, and a
// float64 finite-difference gradcheck of the same call on the reference backend.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { gradcheck, grad } from "../../src/autograd/index.js";
import { loadAddon, withBackend, type BackendName } from "../../src/backend/index.js";
import { tensor, type Tensor } from "../../src/index.js";

type Value = number | string;

export interface FixtureTensor {
  dtype: "float32" | "float64" | "int32" | "bool";
  shape: number[];
  data: Value[];
}

export interface FixtureCase {
  name: string;
  call: string;
  params: Record<string, unknown>;
  inputs: Record<string, FixtureTensor>;
  outputs: FixtureTensor[];
  upstream?: (FixtureTensor | null)[];
  grads?: Record<string, FixtureTensor | null>;
}

/** What an op under test returns: one tensor, several, or max/min's {values, indices}. */
export type OpResult = Tensor | readonly Tensor[] | { values: Tensor; indices: Tensor };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OpCall = (inputs: Record<string, Tensor>, params: Record<string, any>) => OpResult;

export interface Tolerance {
  atol: number;
  rtol: number;
}

export interface FixtureOptions {
  /** Tolerance for float32 results (PyTorch computes in float32 with other rounding). */
  float32?: Tolerance;
  /** Cases that sit on a kink (ties, clamp bounds, |x| at 0), where finite differences are meaningless. */
  noGradcheck?: readonly string[];
  /** Cases whose behaviour deliberately differs from PyTorch, with the reason (reported as skipped). */
  differs?: Record<string, string>;
}

const FLOAT32: Tolerance = { atol: 1e-6, rtol: 1e-5 };
const FLOAT64: Tolerance = { atol: 1e-12, rtol: 1e-10 };

export function loadFixture(op: string): FixtureCase[] {
  const url = new URL(`../fixtures/ops/${op}.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, "utf8")) as { cases: FixtureCase[] }).cases;
}

/** A fixture number: JSON cannot spell the non-finite ones, so they come as strings. */
export function num(v: unknown): number {
  if (typeof v === "number") return v;
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  if (v === "NaN") return NaN;
  throw new TypeError(`fixture: expected a number, got ${JSON.stringify(v)}`);
}

export function toTensor(t: FixtureTensor, requiresGrad = false): Tensor {
  return tensor(Float64Array.from(t.data.map(num)), { dtype: t.dtype, shape: t.shape, requiresGrad });
}

function outputsOf(result: OpResult): Tensor[] {
  if (Array.isArray(result)) return [...result];
  if ("values" in (result as object) && "indices" in (result as object)) {
    const r = result as { values: Tensor; indices: Tensor };
    return [r.values, r.indices];
  }
  return [result as Tensor];
}

function assertMatches(actual: Tensor, expected: FixtureTensor, tol: Tolerance, what: string): void {
  assert.deepEqual([...actual.shape], expected.shape, `${what}: shape`);
  assert.equal(actual.dtype, expected.dtype, `${what}: dtype`);
  const a = Array.from(actual.data() as ArrayLike<number>);
  const e = expected.data.map(num);
  for (let i = 0; i < e.length; i++) {
    const ok = Object.is(a[i], e[i]) || (Number.isNaN(a[i]) && Number.isNaN(e[i])) || Math.abs(a[i] - e[i]) <= tol.atol + tol.rtol * Math.abs(e[i]);
    if (!ok) assert.fail(`${what}: element ${i} is ${a[i]}, PyTorch gives ${e[i]} (atol ${tol.atol}, rtol ${tol.rtol})`);
  }
}

/** All-zero or absent: PyTorch reports an unused input's gradient as None. */
function assertZeroOrNull(g: Tensor | null, what: string): void {
  if (!g) return;
  const values = Array.from(g.data() as ArrayLike<number>);
  assert.ok(values.every((v) => v === 0), `${what}: PyTorch gives no gradient, got ${values.join(", ")}`);
}

export function backends(): BackendName[] {
  return loadAddon() ? ["reference", "cpu"] : ["reference"];
}

function checkCase(c: FixtureCase, call: OpCall, options: FixtureOptions): void {
  const inputs: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(c.inputs)) {
    const differentiable = c.grads !== undefined && name in c.grads && (t.dtype === "float32" || t.dtype === "float64");
    inputs[name] = toTensor(t, differentiable);
  }
  const outs = outputsOf(call(inputs, c.params));
  assert.equal(outs.length, c.outputs.length, `${c.call}: number of outputs`);
  outs.forEach((o, i) => assertMatches(o, c.outputs[i], o.dtype === "float64" ? FLOAT64 : options.float32 ?? FLOAT32, `${c.call} output ${i}`));
  if (!c.upstream || !c.grads) return;
  const pairs = c.upstream.map((u, i) => [outs[i], u] as const).filter(([, u]) => u !== null);
  const names = Object.keys(c.grads).filter((n) => inputs[n].requiresGrad);
  const grads = grad(
    pairs.map(([o]) => o),
    names.map((n) => inputs[n]),
    pairs.map(([, u]) => toTensor(u!)),
    { allowUnused: true },
  );
  names.forEach((n, i) => {
    const expected = c.grads![n];
    const what = `${c.call} gradient of ${n}`;
    if (expected === null) assertZeroOrNull(grads[i], what);
    else {
      assert.ok(grads[i], `${what}: missing`);
      assertMatches(grads[i]!, expected, expected.dtype === "float64" ? FLOAT64 : options.float32 ?? FLOAT32, what);
    }
  });
}

function gradcheckCase(c: FixtureCase, call: OpCall): void {
  const names = Object.keys(c.inputs);
  const differentiable = new Set(Object.keys(c.grads ?? {}).filter((n) => c.grads![n] !== null));
  const inputs = names.map((n) => {
    const t = c.inputs[n];
    const floating = t.dtype === "float32" || t.dtype === "float64";
    return floating ? toTensor({ ...t, dtype: "float64" }, differentiable.has(n)) : toTensor(t);
  });
  const fn = (...ts: Tensor[]): Tensor[] => {
    const byName = Object.fromEntries(names.map((n, i) => [n, ts[i]]));
    return outputsOf(call(byName, c.params)).filter((o) => o.dtype === "float64");
  };
  assert.ok(gradcheck(fn, inputs));
}

/** Registers one test per fixture case and backend, and one gradcheck per differentiable case. */
export function describeFixture(op: string, call: OpCall, options: FixtureOptions = {}): void {
  const cases = loadFixture(op);
  describe(`${op} against PyTorch`, () => {
    for (const backend of backends()) {
      for (const c of cases) {
        const reason = options.differs?.[c.name];
        it(`${c.name} on ${backend}: ${c.call}`, reason ? { skip: reason } : {}, () => withBackend(backend, () => checkCase(c, call, options)));
      }
    }
    for (const c of cases) {
      if (!c.grads || options.noGradcheck?.includes(c.name) || options.differs?.[c.name]) continue;
      it(`${c.name}: float64 gradcheck`, () => withBackend("reference", () => gradcheckCase(c, call)));
    }
  });
}
