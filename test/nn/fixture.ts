// Reading the JSON fixtures written by tools/nn/*.py and comparing tensors against them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tensor } from "../../src/ops/creation.js";
import type { Tensor } from "../../src/tensor/tensor.js";

export interface Encoded {
  dtype: "float32" | "float64" | "int32" | "bool";
  shape: number[];
  data: (number | string)[];
}

export function readFixture<T>(name: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/nn/${name}`, import.meta.url)), "utf8")) as T;
}

function num(v: number | string): number {
  if (typeof v === "number") return v;
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  return NaN;
}

export function decode(e: Encoded): Tensor {
  const values = e.data.map(num);
  if (e.dtype === "bool") return tensor(values.map((v) => v !== 0), { shape: e.shape });
  if (e.dtype === "int32") return tensor(Int32Array.from(values), { shape: e.shape });
  const typed = e.dtype === "float64" ? Float64Array.from(values) : Float32Array.from(values);
  return tensor(typed, { shape: e.shape });
}

/** Elementwise |a − e| ≤ atol + rtol·|e|, naming the worst element on failure. */
export function assertClose(actual: Tensor | null | undefined, expected: Encoded, what: string, rtol = 1e-4, atol = 1e-5): void {
  assert.ok(actual, `${what}: expected a tensor, got ${actual}`);
  assert.deepEqual([...actual.shape], expected.shape, `${what}: shape`);
  const a = actual.to("float64").contiguous().data();
  let worst = -1;
  let worstExcess = 0;
  expected.data.forEach((ev, i) => {
    const e = num(ev);
    if (Number.isNaN(e) ? !Number.isNaN(a[i]) : !(Math.abs(a[i] - e) <= atol + rtol * Math.abs(e) || a[i] === e)) {
      const excess = Number.isFinite(e) ? Math.abs(a[i] - e) - (atol + rtol * Math.abs(e)) : Infinity;
      if (worst < 0 || excess > worstExcess) [worst, worstExcess] = [i, excess];
    }
  });
  if (worst >= 0) assert.fail(`${what}: element ${worst} is ${a[worst]}, PyTorch has ${num(expected.data[worst])}`);
}
