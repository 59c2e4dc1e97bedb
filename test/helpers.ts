import assert from "node:assert/strict";
import type { Tensor } from "../src/index.js";

/** Asserts two nested arrays / tensors agree elementwise within atol + rtol·|expected|. */
export function assertClose(actual: Tensor | number[] | number, expected: Tensor | unknown, atol = 1e-5, rtol = 1e-5, what = "value"): void {
  const flat = (v: unknown): number[] => {
    if (typeof v === "number") return [v];
    if (v && typeof v === "object" && "toArray" in (v as object)) return flat((v as Tensor).toArray());
    if (Array.isArray(v)) return v.flatMap(flat);
    if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
    throw new TypeError(`assertClose: cannot compare ${typeof v}`);
  };
  const a = flat(actual);
  const e = flat(expected);
  assert.equal(a.length, e.length, `${what}: ${a.length} elements vs expected ${e.length}`);
  for (let i = 0; i < a.length; i++) {
    const ok = Object.is(a[i], e[i]) || Math.abs(a[i] - e[i]) <= atol + rtol * Math.abs(e[i]) || (Number.isNaN(a[i]) && Number.isNaN(e[i]));
    if (!ok) assert.fail(`${what}: element ${i} is ${a[i]}, expected ${e[i]} (atol ${atol}, rtol ${rtol})`);
  }
}
