// Shared by the cpu_*.test.ts files: the cpu backend on the built addon, the reference backend it is
// checked against, seeded random data, and a loop over every instruction set this CPU can run.
import assert from "node:assert/strict";
import type { StridedView, TypedArray } from "../../src/backend/backend.js";
import { createCpuBackend, type CpuBackend } from "../../src/backend/cpu/index.js";
import { loadAddon, nativeUnavailableReason } from "../../src/backend/index.js";
import { referenceBackend } from "../../src/backend/reference/index.js";

export { referenceBackend };

let cpu: CpuBackend | null | undefined;

/**
 * The cpu backend, or null when the addon is not built (the tests then skip, saying why; with
 * RINGTORCH_REQUIRE_NATIVE=1, as in CI, a missing addon fails instead).
 */
export function cpuBackend(): CpuBackend | null {
  if (cpu !== undefined) return cpu;
  const addon = loadAddon();
  if (!addon) {
    if (process.env.RINGTORCH_REQUIRE_NATIVE === "1") throw new Error(`the native addon is required: ${nativeUnavailableReason()}`);
    return (cpu = null);
  }
  return (cpu = createCpuBackend(addon));
}

export const skipWithoutNative = (): string | false => (cpuBackend() ? false : `native addon unavailable: ${nativeUnavailableReason()}`);

/** Every instruction set the cpu backend has kernels for. */
export const ISAS: readonly string[] = ["portable", "avx2", "avx512"];

/** The instruction sets this CPU and build can run (portable always), the best left selected. */
export function runnableIsas(): string[] {
  const backend = cpuBackend();
  if (!backend) return [];
  try {
    return ISAS.filter((isa) => backend.setIsa(isa));
  } finally {
    backend.setIsa("auto");
  }
}

/** Runs fn once per instruction set the CPU supports (portable always), restoring the best after. */
export function forEachIsa(fn: (isa: string, cpu: CpuBackend) => void): void {
  const backend = cpuBackend()!;
  try {
    for (const isa of ISAS) {
      if (!backend.setIsa(isa)) continue;
      assert.equal(backend.isa(), isa);
      fn(isa, backend);
    }
  } finally {
    backend.setIsa("auto");
  }
}

/** Runs fn with the pool at 1 and at 2 threads (the parallel paths split work differently). */
export function forEachThreadCount(fn: (threads: number) => void): void {
  const backend = cpuBackend()!;
  const before = backend.getNumThreads();
  try {
    for (const t of [1, 2]) {
      backend.setNumThreads(t);
      fn(t);
    }
  } finally {
    backend.setNumThreads(before);
  }
}

/** mulberry32: small, seeded, good enough for test data. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}

type FloatCtor = Float32ArrayConstructor | Float64ArrayConstructor;
export const FLOAT_TYPES: readonly FloatCtor[] = [Float32Array, Float64Array];

export type Ctor = new (n: number) => TypedArray;

export function randomArray<C extends Ctor>(ctor: C, n: number, rng: Rng, scale = 1): InstanceType<C> {
  const a = new ctor(n) as InstanceType<C>;
  for (let i = 0; i < n; i++) a[i] = rng.normal() * scale;
  return a;
}

/** Tolerances for comparing the float32 / float64 results of two implementations of one formula. */
export function tol(array: TypedArray, f32: [number, number] = [1e-6, 1e-5], f64: [number, number] = [1e-12, 1e-11]): [number, number] {
  return array instanceof Float64Array ? f64 : f32;
}

/** Elementwise |actual - expected| <= atol + rtol |expected|, NaN matching NaN, with a useful message. */
export function assertArraysClose(actual: ArrayLike<number>, expected: ArrayLike<number>, atol: number, rtol: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length ${actual.length} vs ${expected.length}`);
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (a === e || (Number.isNaN(a) && Number.isNaN(e))) continue;
    if (!(Math.abs(a - e) <= atol + rtol * Math.abs(e))) assert.fail(`${what}: element ${i} is ${a}, expected ${e} (atol ${atol}, rtol ${rtol})`);
  }
}

/**
 * A random strided view over a fresh array for `shape`: a random permutation of the dims in memory,
 * gaps between elements, a leading offset, and (if `broadcast`) stride 0 on some dims.
 */
export function randomView<C extends Ctor>(ctor: C, shape: readonly number[], rng: Rng, broadcast = false, fillWith?: (i: number) => number): StridedView & { data: InstanceType<C> } {
  const ndim = shape.length;
  const order = [...Array(ndim).keys()];
  for (let i = ndim - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const strides = new Array<number>(ndim).fill(0);
  let step = rng.int(1, 2);
  for (let k = ndim - 1; k >= 0; k--) {
    const d = order[k];
    if (broadcast && rng.next() < 0.3) continue;
    strides[d] = step;
    step *= shape[d] + rng.int(0, 1);
  }
  const offset = rng.int(0, 3);
  const data = new ctor(offset + step + 2) as TypedArray & InstanceType<C>;
  for (let i = 0; i < data.length; i++) data[i] = fillWith ? fillWith(i) : rng.normal();
  return { data, offset, strides };
}

export function randomShape(rng: Rng, maxDims = 4, maxDim = 6): number[] {
  const ndim = rng.int(0, maxDims);
  return Array.from({ length: ndim }, () => (rng.next() < 0.1 ? 1 : rng.int(1, maxDim)));
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}
