// cpu vs reference for fill, copy, unary, unaryGrad, binary and where, on every instruction set.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BinaryOp, TypedArray, UnaryGradOp, UnaryOp } from "../../src/backend/backend.js";
import { BINARY, UNARY, UNARY_GRAD } from "../../src/backend/cpu/opcodes.js";
import {
  type Ctor,
  FLOAT_TYPES,
  Rng,
  assertArraysClose,
  cpuBackend,
  forEachIsa,
  forEachThreadCount,
  numel,
  randomArray,
  randomShape,
  randomView,
  referenceBackend as ref,
  skipWithoutNative,
  tol,
} from "./cpu_support.js";

const skip = skipWithoutNative();
// Lengths around the vector widths (4, 8, 16) and the unrolled loops, plus one long run.
const LENGTHS = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000];
const SPECIAL = [0, -0, 1, -1, 0.5, -2.5, 1e-30, -1e-30, 30, -30, 90, -90, 200, -200, Infinity, -Infinity, NaN];

function inputs<C extends Ctor>(ctor: C, n: number, rng: Rng, scale = 2): InstanceType<C> {
  const x = randomArray(ctor, n, rng, scale);
  for (let i = 0; i < Math.min(n, SPECIAL.length); i++) if (rng.next() < 0.5) x[rng.int(0, n - 1)] = SPECIAL[i];
  return x;
}

// Vector transcendentals in float32 are within a few ulp of the correctly rounded result.
// Everything else rounds twice at most (the reference computes in float64 and rounds once).
const UNARY_F32_TOL: Partial<Record<UnaryOp, [number, number]>> = {
  exp: [1e-37, 4e-7], log: [1e-7, 4e-7], tanh: [1e-7, 4e-7], sigmoid: [1e-7, 4e-7], silu: [1e-7, 4e-7],
  gelu: [1e-7, 1e-6], gelu_tanh: [1e-7, 1e-6], pow_scalar: [0, 4e-7],
};

describe("cpu backend: elementwise", { skip }, () => {
  it("fill writes every dtype's encoding of the value", () => {
    const cpu = cpuBackend()!;
    for (const value of [0, -0, 1.5, -2.75, 3.00390625, NaN, Infinity, 1e10]) {
      for (const ctor of [Float32Array, Float64Array, Int32Array, Uint16Array, Uint8Array]) {
        const got = new ctor(12).fill(7);
        const want = new ctor(12).fill(7);
        cpu.fill(got, 3, 6, value);
        ref.fill(want, 3, 6, value);
        assert.deepEqual(got, want, `fill ${ctor.name} with ${value}`);
      }
    }
  });

  it("copy gathers strided views between every pair of dtypes", () => {
    const cpu = cpuBackend()!;
    const rng = new Rng(1);
    const ctors = [Float32Array, Float64Array, Int32Array, Uint16Array, Uint8Array] as const;
    const values = [0, -0, 1, -1, 1.5, -1.5, 2.5, -2.5, 3e9, -3e9, 1 + 2 ** -8, 1 + 3 * 2 ** -9, NaN, Infinity, -Infinity, 0.1, 65504];
    forEachThreadCount(() => {
      for (let t = 0; t < 150; t++) {
        const shape = t === 0 ? [0, 3] : t === 1 ? [] : randomShape(rng, 4, 7);
        const src = ctors[t % 5];
        const dst = ctors[Math.floor(t / 5) % 5];
        const fillWith = (): number => {
          if (src === Uint16Array) return rng.int(0, 0xffff);
          if (src === Uint8Array) return rng.int(0, 1);
          return rng.next() < 0.5 ? rng.pick(values) : rng.normal() * 100;
        };
        const view = randomView(src, shape, rng, rng.next() < 0.3, fillWith);
        const n = numel(shape);
        const got = new dst(n + 2).fill(9);
        const want = new dst(n + 2).fill(9);
        cpu.copy(view, shape, got, 1);
        ref.copy(view, shape, want, 1);
        assert.deepEqual(got, want, `copy ${src.name} -> ${dst.name} over [${shape}] strides [${view.strides}]`);
      }
    });
  });

  it("copy of a large contiguous and a large transposed view (threaded rows)", () => {
    const cpu = cpuBackend()!;
    const rng = new Rng(2);
    forEachThreadCount(() => {
      const x = randomArray(Float32Array, 300 * 700, rng);
      for (const strides of [[700, 1], [1, 300]]) {
        const got = new Float64Array(300 * 700);
        const want = new Float64Array(300 * 700);
        cpu.copy({ data: x, offset: 0, strides }, strides[0] === 1 ? [700, 300] : [300, 700], got, 0);
        ref.copy({ data: x, offset: 0, strides }, strides[0] === 1 ? [700, 300] : [300, 700], want, 0);
        assert.deepEqual(got, want);
      }
    });
  });

  it("unary ops match the reference", () => {
    const rng = new Rng(3);
    const params: Partial<Record<UnaryOp, [number, number][]>> = {
      pow_scalar: [[2, 0], [0.5, 0], [3, 0], [-1.5, 0], [0, 0]],
      clamp: [[-0.5, 0.75], [-Infinity, 0.2], [0.1, Infinity]],
      add_scalar: [[0.3, 0]], mul_scalar: [[-1.7, 0]], rsub_scalar: [[2, 0]], rdiv_scalar: [[3, 0]],
    };
    forEachIsa((isa, cpu) => {
      for (const op of Object.keys(UNARY) as UnaryOp[]) {
        for (const ctor of FLOAT_TYPES) {
          for (const [p0, p1] of params[op] ?? [[0, 0]]) {
            for (const n of LENGTHS) {
              const x = inputs(ctor, n + 3, rng);
              const got = new ctor(n);
              const want = new ctor(n);
              cpu.unary(op, x, 3, got, n, p0, p1);
              ref.unary(op, x, 3, want, n, p0, p1);
              const [atol, rtol] = ctor === Float32Array ? (UNARY_F32_TOL[op] ?? [1e-7, 2.4e-7]) : [1e-14, 4e-15];
              assertArraysClose(got, want, atol, rtol, `${isa} ${ctor.name} ${op}(${p0}, ${p1}) n=${n}`);
            }
          }
        }
      }
    });
  });

  it("unaryGrad ops match the reference", () => {
    const rng = new Rng(4);
    const params: Partial<Record<UnaryGradOp, [number, number][]>> = {
      pow_scalar: [[2, 0], [0.5, 0], [3, 0], [-1.5, 0], [0, 0]],
      clamp: [[-0.5, 0.75], [-Infinity, 0.2]],
    };
    const fromOutput: Partial<Record<UnaryGradOp, UnaryOp>> = { tanh: "tanh", sigmoid: "sigmoid", exp: "exp", sqrt: "sqrt", rsqrt: "rsqrt", reciprocal: "reciprocal" };
    forEachIsa((isa, cpu) => {
      for (const op of Object.keys(UNARY_GRAD) as UnaryGradOp[]) {
        for (const ctor of FLOAT_TYPES) {
          for (const [p0, p1] of params[op] ?? [[0, 0]]) {
            for (const n of LENGTHS) {
              let saved: TypedArray = inputs(ctor, n + 2, rng);
              const forward = fromOutput[op];
              if (forward) {
                const y = new ctor(n + 2);
                ref.unary(forward, saved, 0, y, n + 2);
                saved = y;
              }
              // Non-finite gradients only where the result is a selection: elsewhere inf times a
              // derivative that underflows differently in float32 and float64 is noise.
              const grad = ["relu", "clamp", "abs"].includes(op) ? inputs(ctor, n, rng) : randomArray(ctor, n, rng, 2);
              const got = new ctor(n);
              const want = new ctor(n);
              cpu.unaryGrad(op, grad, saved, 2, got, n, p0, p1);
              ref.unaryGrad(op, grad, saved, 2, want, n, p0, p1);
              const [atol, rtol] = ctor === Float32Array ? [1e-6, 2e-6] : [1e-13, 1e-14];
              assertArraysClose(got, want, atol, rtol, `${isa} ${ctor.name} d${op}(${p0}, ${p1}) n=${n}`);
            }
          }
        }
      }
    });
  });

  it("binary ops broadcast over strided views like the reference", () => {
    const rng = new Rng(5);
    forEachIsa((isa, cpu) => {
      forEachThreadCount((threads) => {
        for (let t = 0; t < 60; t++) {
          const op = (Object.keys(BINARY) as BinaryOp[])[t % 15];
          const ctor = FLOAT_TYPES[Math.floor(t / 15) % 2];
          const shape = t < 4 ? [3, 0, 2] : randomShape(rng, 4, 9);
          const a = randomView(ctor, shape, rng, rng.next() < 0.5, () => rng.normal());
          const b = randomView(ctor, shape, rng, rng.next() < 0.5, () => (rng.next() < 0.1 ? a.data[0] : rng.normal()));
          if (op === "pow") for (let i = 0; i < a.data.length; i++) a.data[i] = Math.abs(a.data[i]);
          const outCtor = BINARY[op] >= BINARY.eq ? Uint8Array : ctor;
          const got = new outCtor(numel(shape));
          const want = new outCtor(numel(shape));
          cpu.binary(op, a, b, shape, got);
          ref.binary(op, a, b, shape, want);
          const [atol, rtol] = tol(got, [0, op === "pow" ? 4e-7 : 0], [0, 1e-15]);
          assertArraysClose(got, want, atol, rtol, `${isa} threads=${threads} ${ctor.name} ${op} over [${shape}]`);
        }
      });
    });
  });

  it("binary fast paths: same-shape, row broadcast, scalar, long rows split over threads", () => {
    const rng = new Rng(6);
    const cases: { shape: number[]; a: number[]; b: number[] }[] = [
      { shape: [140000], a: [1], b: [1] },
      { shape: [64, 1024], a: [1024, 1], b: [0, 1] },
      { shape: [64, 1024], a: [1024, 1], b: [1, 0] },
      { shape: [200, 777], a: [777, 1], b: [0, 0] },
      { shape: [200, 777], a: [0, 0], b: [777, 1] },
    ];
    for (const { shape, a: as, b: bs } of cases) {
      for (const op of ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "gt"] as BinaryOp[]) {
        const a = { data: randomArray(Float32Array, numel(shape), rng), offset: 0, strides: as };
        const b = { data: randomArray(Float32Array, numel(shape), rng), offset: 0, strides: bs };
        a.data[5] = NaN;
        b.data[7] = NaN;
        const outCtor = op === "gt" ? Uint8Array : Float32Array;
        const want = new outCtor(numel(shape));
        ref.binary(op, a, b, shape, want);
        forEachIsa((isa, cpu) => {
          forEachThreadCount((threads) => {
            const got = new outCtor(numel(shape));
            cpu.binary(op, a, b, shape, got);
            assertArraysClose(got, want, 0, op === "pow" ? 4e-7 : 0, `${isa} threads=${threads} ${op} [${shape}] strides ${as} / ${bs}`);
          });
        });
      }
    }
  });

  it("binary on int32 and bool falls back to the reference's integer semantics", () => {
    const cpu = cpuBackend()!;
    const a = { data: Int32Array.from([7, -7, 5, 0]), offset: 0, strides: [1] };
    const b = { data: Int32Array.from([2, 2, -3, 4]), offset: 0, strides: [1] };
    for (const op of ["div", "mul", "eq", "lt"] as BinaryOp[]) {
      const outCtor = BINARY[op] >= BINARY.eq ? Uint8Array : Int32Array;
      const got = new outCtor(4);
      const want = new outCtor(4);
      cpu.binary(op, a, b, [4], got);
      ref.binary(op, a, b, [4], want);
      assert.deepEqual(got, want, op);
    }
  });

  it("where selects over broadcast views for every element size", () => {
    const cpu = cpuBackend()!;
    const rng = new Rng(7);
    forEachThreadCount(() => {
      for (let t = 0; t < 50; t++) {
        const shape = randomShape(rng, 4, 8);
        const ctor = [Float32Array, Float64Array, Int32Array, Uint16Array, Uint8Array][t % 5];
        const cond = randomView(Uint8Array, shape, rng, true, () => rng.int(0, 1));
        const fill = (): number => (ctor === Uint8Array ? rng.int(0, 1) : rng.int(-1000, 1000));
        const a = randomView(ctor as Float64ArrayConstructor, shape, rng, true, fill);
        const b = randomView(ctor as Float64ArrayConstructor, shape, rng, true, fill);
        const got = new ctor(numel(shape));
        const want = new ctor(numel(shape));
        cpu.where(cond, a, b, shape, got);
        ref.where(cond, a, b, shape, want);
        assert.deepEqual(got, want, `where ${ctor.name} [${shape}]`);
      }
    });
  });
});
