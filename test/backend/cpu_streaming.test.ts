// Outputs of 16 MiB and more per thread are written with non-temporal stores (native/kernels/unary.inl,
// kStreamBytes) when the output is vector-aligned, and with ordinary stores otherwise. Both paths,
// on the instruction sets that have them, against the reference backend (bit for bit: these ops
// round once).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Backend, TypedArray } from "../../src/backend/backend.js";
import { allocate } from "../../src/tensor/storage.js";
import type { CpuBackend } from "../../src/backend/cpu/index.js";
import { Rng, cpuBackend, forEachIsa, randomArray, referenceBackend as ref, skipWithoutNative } from "./cpu_support.js";

const skip = skipWithoutNative();
const STREAM_BYTES = 16 << 20;

/** The instruction sets with non-temporal stores (the portable kernels have none and are covered elsewhere). */
function forEachStreamingIsa(fn: (isa: string, cpu: CpuBackend) => void): void {
  forEachIsa((isa, cpu) => {
    if (isa !== "portable") fn(isa, cpu);
  });
}

/** Zeroed arena memory (64-byte aligned) of n elements, or the same shifted by one element (misaligned). */
function output(dtype: "float32" | "float64", n: number, aligned: boolean): TypedArray {
  const data = allocate(dtype, n + 1, true).data;
  return (aligned ? data.subarray(0, n) : data.subarray(1)) as TypedArray;
}

/** Equal element for element, NaN matching NaN (a plain loop: these arrays have millions of elements). */
function assertSame(got: TypedArray, want: TypedArray, what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i] && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) assert.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`);
  }
}

function checkLongRuns(dtype: "float32" | "float64", rng: Rng): void {
  const Ctor = dtype === "float32" ? Float32Array : Float64Array;
  // Just above the threshold, on one thread (a thread's share of the run is what counts).
  const n = STREAM_BYTES / Ctor.BYTES_PER_ELEMENT + 37;
  const a = randomArray(Ctor, n, rng);
  const b = randomArray(Ctor, n, rng);
  a[3] = NaN;
  const dense = (data: TypedArray, offset = 0) => ({ data, offset, strides: [1] });
  const cases: [string, (be: Backend, out: TypedArray) => void][] = [
    ["add", (be, out) => be.binary("add", dense(a), dense(b), [n], out)],
    ["mul by a broadcast scalar", (be, out) => be.binary("mul", dense(a), { data: b, offset: 2, strides: [0] }, [n], out)],
    ["relu", (be, out) => be.unary("relu", a, 0, out, n)],
    ["add_scalar at an offset", (be, out) => be.unary("add_scalar", a, 3, out, n - 3, 0.5)],
    ["relu backward", (be, out) => be.unaryGrad("relu", b, a, 0, out, n)],
  ];
  for (const [what, run] of cases) {
    const want = new Ctor(n);
    run(ref, want);
    forEachStreamingIsa((isa, cpu) => {
      for (const aligned of [true, false]) {
        const got = output(dtype, n, aligned);
        run(cpu, got);
        assertSame(got, want, `${isa} ${dtype} ${what} (${aligned ? "aligned" : "misaligned"} output)`);
      }
    });
  }
  // In place: the output is the first operand.
  const want = new Ctor(n);
  ref.binary("add", dense(a), dense(b), [n], want);
  forEachStreamingIsa((isa, cpu) => {
    const x = output(dtype, n, true);
    x.set(a);
    cpu.binary("add", dense(x), dense(b), [n], x);
    assertSame(x, want, `${isa} ${dtype} add in place`);
  });
}

describe("cpu backend: long runs written past the caches", { skip }, () => {
  it("binary, unary and unaryGrad over runs above the streaming threshold match the reference", () => {
    const backend = cpuBackend()!;
    const threads = backend.getNumThreads();
    backend.setNumThreads(1);
    try {
      const rng = new Rng(11);
      checkLongRuns("float32", rng);
      checkLongRuns("float64", rng);
    } finally {
      backend.setNumThreads(threads);
    }
  });
});
