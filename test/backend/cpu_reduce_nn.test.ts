// cpu vs reference for reduce, softmax, layer norm, the index kernels and triangle.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ReduceOp } from "../../src/backend/backend.js";
import {
  FLOAT_TYPES,
  Rng,
  assertArraysClose,
  cpuBackend,
  forEachIsa,
  forEachThreadCount,
  randomArray,
  referenceBackend as ref,
  skipWithoutNative,
  tol,
} from "./cpu_support.js";

const skip = skipWithoutNative();

describe("cpu backend: reductions and nn kernels", { skip }, () => {
  it("reduce sum/max/min/prod over the middle axis, NaN first-extreme rules, empty axes", () => {
    const rng = new Rng(21);
    const shapes = [[1, 1, 1], [3, 0, 2], [1, 1000, 1], [4, 37, 1], [2, 5, 9], [1, 64, 300], [3, 1, 7], [5, 300, 3], [1, 70001, 1], [2, 40, 37], [1, 33, 531]];
    forEachIsa((isa, cpu) => {
      for (const [outer, size, inner] of shapes) {
        for (const op of ["sum", "max", "min", "prod"] as ReduceOp[]) {
          if (size === 0 && (op === "max" || op === "min")) continue;
          for (const ctor of FLOAT_TYPES) {
            const x = randomArray(ctor, 2 + outer * size * inner, rng, op === "prod" ? 0.3 : 1);
            if (op === "prod") for (let i = 0; i < x.length; i++) x[i] = 1 + x[i];
            if (size > 3 && rng.next() < 0.5) {
              x[2 + rng.int(0, outer * size * inner - 1)] = NaN;
              x[2 + rng.int(0, outer * size * inner - 1)] = NaN;
            }
            const got = new ctor(outer * inner);
            const want = new ctor(outer * inner);
            const gi = op === "max" || op === "min" ? new Int32Array(outer * inner) : null;
            const wi = gi ? new Int32Array(outer * inner) : null;
            cpu.reduce(op, x, 2, outer, size, inner, got, gi);
            ref.reduce(op, x, 2, outer, size, inner, want, wi);
            const [atol, rtol] = tol(got, [1e-6, 2e-6], [1e-12, 1e-12]);
            const what = `${isa} ${ctor.name} ${op} [${outer}, ${size}, ${inner}]`;
            assertArraysClose(got, want, atol, rtol, what);
            if (gi) assert.deepEqual(gi, wi, `${what} indices`);
          }
        }
      }
    });
  });

  it("float32 sums of long axes keep float64-grade accuracy (values with a large mean, a constant)", () => {
    // The kernel adds float32 in short blocks and the blocks in float64: its error must not grow
    // with n as a float32 running sum's does (2.3e-2 relative here). PyTorch 2.13's x.sum() is off by
    // 3.9e-8 (mean 1000) and 1.1e-6 (the constant) relative on these inputs; float32's rounding of
    // the result alone is up to 6e-8.
    const n = 16 * 2 ** 20;
    const rng = new Rng(23);
    const inputs: [string, (i: number) => number, number][] = [
      ["mean 1000, sd 1", () => 1000 + rng.normal(), 1e-7],
      ["the constant 1000.1", () => 1000.1, 3e-7],
    ];
    for (const [name, value, rtol] of inputs) {
      const x = new Float32Array(new SharedArrayBuffer(4 * n));
      for (let i = 0; i < n; i++) x[i] = value(i);
      const cols = 1024;
      const want = exactSum(x, 0, n, 1);
      const wantCols = Array.from({ length: cols }, (_, c) => exactSum(x, c, n / cols, cols));
      forEachIsa((isa, cpu) => {
        const all = new Float32Array(1);
        cpu.reduce("sum", x, 0, 1, n, 1, all, null);
        const err = Math.abs(all[0] - want) / want;
        assert.ok(err <= rtol, `${isa} ${name}: sum of ${n} off by ${err.toExponential(2)} relative`);
        const byCol = new Float32Array(cols);
        cpu.reduce("sum", x, 0, 1, n / cols, cols, byCol, null);
        for (let c = 0; c < cols; c++) {
          const e = Math.abs(byCol[c] - wantCols[c]) / wantCols[c];
          assert.ok(e <= rtol, `${isa} ${name}: column ${c}'s sum of ${n / cols} off by ${e.toExponential(2)} relative`);
        }
      });
    }
  });

  it("layer norm's float32 statistics: a large mean with a tiny spread, long rows, squares beyond float32", () => {
    // The variance adds float32 squares of deviations from the mean rounded to float32, in blocks,
    // and corrects for that rounding; squares that overflow float32 are redone in float64.
    const rng = new Rng(24);
    const rows: [string, Float32Array][] = [
      ["mean 1e4, sd 1e-3", Float32Array.from({ length: 4133 }, () => 1e4 + 1e-3 * rng.normal())],
      ["mean 1000, sd 1, 100003 long", Float32Array.from({ length: 100003 }, () => 1000 + rng.normal())],
      ["values to 3e20", Float32Array.from({ length: 67 }, (_, i) => [1e20, -1e20, 3e20, 0][i % 4] * (1 + i / 100))],
    ];
    for (const [name, x] of rows) {
      const n = x.length;
      const mean = exactSum(x, 0, n, 1) / n;
      let ss = 0;
      for (let i = 0; i < n; i++) ss += (x[i] - mean) ** 2;
      const eps = 1e-12;
      const rstd = 1 / Math.sqrt(ss / n + eps);
      forEachIsa((isa, cpu) => {
        const out = new Float32Array(n), m = new Float32Array(1), r = new Float32Array(1);
        cpu.layerNorm(x, 1, n, null, null, eps, out, m, r);
        assert.ok(Math.abs(m[0] - mean) <= 1e-6 * Math.abs(mean), `${isa} ${name}: mean ${m[0]}, expected ${mean}`);
        assert.ok(Math.abs(r[0] - rstd) <= 1e-5 * rstd, `${isa} ${name}: rstd ${r[0]}, expected ${rstd}`);
      });
    }
  });

  it("softmax and log_softmax, forward and backward, including -inf and large logits", () => {
    const rng = new Rng(22);
    forEachIsa((isa, cpu) => {
      forEachThreadCount((threads) => {
        for (const [rows, cols] of [[1, 1], [3, 7], [5, 16], [2, 33], [64, 10], [200, 257]]) {
          for (const ctor of FLOAT_TYPES) {
            for (const log of [false, true]) {
              const x = randomArray(ctor, 1 + rows * cols, rng, 4);
              x[1] = -Infinity;
              x[1 + rows * cols - 1] = 60;
              const got = new ctor(rows * cols);
              const want = new ctor(rows * cols);
              cpu.softmax(x, 1, rows, cols, log, got);
              ref.softmax(x, 1, rows, cols, log, want);
              const what = `${isa} threads=${threads} ${ctor.name} ${log ? "log_" : ""}softmax [${rows}, ${cols}]`;
              assertArraysClose(got, want, ...tol(got, [1e-6, 2e-6], [1e-14, 1e-13]), what);
              const g = randomArray(ctor, rows * cols, rng);
              const gotB = new ctor(rows * cols);
              const wantB = new ctor(rows * cols);
              cpu.softmaxBackward(g, want, rows, cols, log, gotB);
              ref.softmaxBackward(g, want, rows, cols, log, wantB);
              assertArraysClose(gotB, wantB, ...tol(got, [2e-6, 2e-5], [1e-13, 1e-12]), `${what} backward`);
            }
          }
        }
      });
    });
  });

  it("layer norm forward and backward, with and without weight and bias", () => {
    const rng = new Rng(23);
    forEachIsa((isa, cpu) => {
      forEachThreadCount((threads) => {
        for (const [rows, cols] of [[1, 1], [3, 5], [4, 16], [7, 33], [130, 256]]) {
          for (const ctor of FLOAT_TYPES) {
            for (const affine of [true, false]) {
              const x = randomArray(ctor, rows * cols, rng, 3);
              for (let i = 0; i < x.length; i++) x[i] += 5;
              const w = affine ? randomArray(ctor, cols, rng) : null;
              const b = affine ? randomArray(ctor, cols, rng) : null;
              const out = [new ctor(rows * cols), new ctor(rows * cols)];
              const mean = [new ctor(rows), new ctor(rows)];
              const rstd = [new ctor(rows), new ctor(rows)];
              cpu.layerNorm(x, rows, cols, w, b, 1e-5, out[0], mean[0], rstd[0]);
              ref.layerNorm(x, rows, cols, w, b, 1e-5, out[1], mean[1], rstd[1]);
              const what = `${isa} threads=${threads} ${ctor.name} layerNorm [${rows}, ${cols}] affine=${affine}`;
              const t = tol(x, [2e-6, 2e-5], [1e-12, 1e-11]);
              assertArraysClose(out[0], out[1], ...t, what);
              assertArraysClose(mean[0], mean[1], ...t, `${what} mean`);
              assertArraysClose(rstd[0], rstd[1], ...t, `${what} rstd`);
              const g = randomArray(ctor, rows * cols, rng);
              const gx = [new ctor(rows * cols), new ctor(rows * cols)];
              const gw = affine ? [new ctor(cols).fill(NaN), new ctor(cols)] : [null, null];
              const gb = affine ? [new ctor(cols).fill(NaN), new ctor(cols)] : [null, null];
              cpu.layerNormBackward(g, x, rows, cols, w, mean[1], rstd[1], gx[0], gw[0], gb[0]);
              ref.layerNormBackward(g, x, rows, cols, w, mean[1], rstd[1], gx[1], gw[1], gb[1]);
              const tb = tol(x, [2e-5, 1e-4], [1e-11, 1e-10]);
              assertArraysClose(gx[0], gx[1], ...tb, `${what} gradX`);
              if (affine) {
                assertArraysClose(gw[0]!, gw[1]!, ...tb, `${what} gradWeight`);
                assertArraysClose(gb[0]!, gb[1]!, ...tb, `${what} gradBias`);
              }
            }
          }
        }
      });
    });
  });

  it("indexSelect / indexAdd / gather / scatterAdd with repeated indices, every dtype they take", () => {
    const cpu = cpuBackend()!;
    const rng = new Rng(24);
    for (const [outer, size, inner, k] of [[1, 5, 1, 3], [2, 7, 3, 9], [3, 4, 17, 1], [1, 100, 64, 300], [2, 1, 5, 4]]) {
      for (const ctor of [Float32Array, Float64Array, Int32Array, Uint16Array, Uint8Array]) {
        const fill = (n: number): InstanceType<typeof ctor> => {
          const a = new ctor(n);
          for (let i = 0; i < n; i++) a[i] = ctor === Uint8Array ? rng.int(0, 1) : ctor === Uint16Array ? rng.int(0, 0x7f7f) : rng.int(-50, 50) / 4;
          return a;
        };
        const what = `${ctor.name} [${outer}, ${size}, ${inner}] k=${k}`;
        const index = Int32Array.from({ length: k }, () => rng.int(0, size - 1));
        const x = fill(outer * size * inner);
        const sel = [new ctor(outer * k * inner), new ctor(outer * k * inner)];
        cpu.indexSelect(x, outer, size, inner, index, sel[0]);
        ref.indexSelect(x, outer, size, inner, index, sel[1]);
        assert.deepEqual(sel[0], sel[1], `indexSelect ${what}`);

        const perElement = Int32Array.from({ length: outer * k * inner }, () => rng.int(0, size - 1));
        const gat = [new ctor(outer * k * inner), new ctor(outer * k * inner)];
        cpu.gather(x, outer, size, inner, perElement, k, gat[0]);
        ref.gather(x, outer, size, inner, perElement, k, gat[1]);
        assert.deepEqual(gat[0], gat[1], `gather ${what}`);

        if (ctor === Uint16Array || ctor === Uint8Array) continue;
        const g = fill(outer * k * inner);
        const acc = [fill(outer * size * inner), new ctor(0)];
        acc[1] = acc[0].slice();
        cpu.indexAdd(g, outer, size, inner, index, acc[0]);
        ref.indexAdd(g, outer, size, inner, index, acc[1]);
        assertArraysClose(acc[0], acc[1], 1e-5, 1e-6, `indexAdd ${what}`);
        const sc = [fill(outer * size * inner), new ctor(0)];
        sc[1] = sc[0].slice();
        cpu.scatterAdd(g, outer, size, inner, perElement, k, sc[0]);
        ref.scatterAdd(g, outer, size, inner, perElement, k, sc[1]);
        assertArraysClose(sc[0], sc[1], 1e-5, 1e-6, `scatterAdd ${what}`);
      }
    }
  });

  it("index kernels reject an out-of-range index instead of touching memory", () => {
    const cpu = cpuBackend()!;
    const x = new Float32Array(12);
    const out = new Float32Array(12);
    for (const bad of [4, -1, 1 << 30]) {
      assert.throws(() => cpu.indexSelect(x, 1, 4, 3, Int32Array.from([0, bad]), out), /index is out of range/);
      assert.throws(() => cpu.indexAdd(new Float32Array(6), 1, 4, 3, Int32Array.from([bad, 1]), out), /index is out of range/);
      assert.throws(() => cpu.gather(x, 1, 4, 3, Int32Array.from([0, 1, bad]), 1, out), /index is out of range/);
      assert.throws(() => cpu.scatterAdd(new Float32Array(3), 1, 4, 3, Int32Array.from([bad, 0, 0]), 1, out), /index is out of range/);
    }
  });

  it("triangle keeps the lower or upper part around any diagonal", () => {
    const cpu = cpuBackend()!;
    const rng = new Rng(25);
    for (const [batch, rows, cols] of [[1, 1, 1], [2, 3, 5], [1, 6, 4], [3, 7, 7]]) {
      for (const diagonal of [-8, -2, -1, 0, 1, 3, 9]) {
        for (const upper of [false, true]) {
          for (const ctor of [Float32Array, Float64Array, Uint16Array, Uint8Array]) {
            const x = new ctor(batch * rows * cols);
            for (let i = 0; i < x.length; i++) x[i] = rng.int(1, 200);
            const got = new ctor(x.length).fill(7);
            const want = new ctor(x.length).fill(7);
            cpu.triangle(x, batch, rows, cols, diagonal, upper, got);
            ref.triangle(x, batch, rows, cols, diagonal, upper, want);
            assert.deepEqual(got, want, `${ctor.name} [${batch}, ${rows}, ${cols}] diagonal ${diagonal} upper ${upper}`);
          }
        }
      }
    }
  });
});

/** Σ x[first + i * stride] for i < count, compensated (Neumaier) so that it is exact to float64's rounding. */
function exactSum(x: Float32Array, first: number, count: number, stride: number): number {
  let s = 0;
  let c = 0;
  for (let i = 0, at = first; i < count; i++, at += stride) {
    const v = x[at];
    const t = s + v;
    c += Math.abs(s) >= Math.abs(v) ? s - t + v : v - t + s;
    s = t;
  }
  return s + c;
}
