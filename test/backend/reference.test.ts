// The reference backend against hand-computed values and simple independent formulas.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TypedArray, UnaryGradOp, UnaryOp } from "../../src/backend/backend.js";
import { bf16ToFloat, floatToBf16, referenceBackend as ref } from "../../src/backend/reference/index.js";

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-12, what = ""): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (Number.isNaN(e)) {
      assert.ok(Number.isNaN(a), `${what}[${i}]: expected NaN, got ${a}`);
      continue;
    }
    const ok = a === e || Math.abs(a - e) <= tol * Math.max(1, Math.abs(e));
    assert.ok(ok, `${what}[${i}]: expected ${e}, got ${a}`);
  }
}

const f64 = (values: number[]): Float64Array => Float64Array.from(values);
const contiguous = (data: TypedArray, shape: number[]) => {
  const strides: number[] = [];
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d];
  }
  return { data, offset: 0, strides };
};

describe("bfloat16 conversion", () => {
  it("rounds to nearest even on the upper 16 bits", () => {
    assert.equal(floatToBf16(1), 0x3f80);
    assert.equal(floatToBf16(-1.5), 0xbfc0);
    // 1 + 2^-8 lies exactly between 0x3f80 and 0x3f81: ties go to the even 0x3f80.
    assert.equal(floatToBf16(1 + 2 ** -8), 0x3f80);
    // 1 + 3·2^-8 lies between 0x3f81 and 0x3f82: ties go to the even 0x3f82.
    assert.equal(floatToBf16(1 + 3 * 2 ** -8), 0x3f82);
    // Just above a tie rounds up.
    assert.equal(floatToBf16(1 + 2 ** -8 + 2 ** -20), 0x3f81);
    assert.equal(floatToBf16(Infinity), 0x7f80);
    assert.equal(floatToBf16(-Infinity), 0xff80);
    // The largest float32 rounds up to infinity.
    assert.equal(floatToBf16(3.4028234663852886e38), 0x7f80);
    assert.equal(floatToBf16(0), 0);
    assert.equal(floatToBf16(-0), 0x8000);
  });

  it("keeps NaN a NaN and decodes bits back to float32", () => {
    assert.ok(Number.isNaN(bf16ToFloat(floatToBf16(NaN))));
    assert.equal(bf16ToFloat(0x4049), 3.140625);
    assert.equal(bf16ToFloat(0xc000), -2);
    assert.equal(bf16ToFloat(0x7f80), Infinity);
  });
});

describe("fill and copy", () => {
  it("fills with the value encoded for the dtype", () => {
    const b = new Uint8Array(4);
    ref.fill(b, 1, 2, 0.5);
    assert.deepEqual([...b], [0, 1, 1, 0]);
    const h = new Uint16Array(2);
    ref.fill(h, 0, 2, 2);
    assert.deepEqual([...h], [0x4000, 0x4000]);
  });

  it("gathers a transposed view and a broadcast (stride 0) view", () => {
    // [[1,2,3],[4,5,6]] read as its transpose [3,2].
    const x = f64([1, 2, 3, 4, 5, 6]);
    const out = new Float64Array(6);
    ref.copy({ data: x, offset: 0, strides: [1, 3] }, [3, 2], out, 0);
    assert.deepEqual([...out], [1, 4, 2, 5, 3, 6]);
    const row = new Float64Array(6);
    ref.copy({ data: x, offset: 1, strides: [0, 1] }, [3, 2], row, 0);
    assert.deepEqual([...row], [2, 3, 2, 3, 2, 3]);
  });

  it("handles 0-d and empty shapes and writes at outOffset", () => {
    const out = new Float32Array(3);
    ref.copy({ data: f64([7, 8]), offset: 1, strides: [] }, [], out, 2);
    assert.deepEqual([...out], [0, 0, 8]);
    ref.copy({ data: f64([]), offset: 0, strides: [3, 1] }, [0, 3], out, 0);
    assert.deepEqual([...out], [0, 0, 8]);
  });

  it("converts between dtypes as PyTorch does", () => {
    const src = { data: f64([-2.7, 2.7, 0, -0, NaN, 1e-30]), offset: 0, strides: [1] };
    const ints = new Int32Array(6);
    ref.copy(src, [6], ints, 0);
    assert.deepEqual([...ints].slice(0, 4), [-2, 2, 0, 0]);
    const bools = new Uint8Array(6);
    ref.copy(src, [6], bools, 0);
    assert.deepEqual([...bools], [1, 1, 0, 0, 1, 1]);
    const halves = new Uint16Array(2);
    ref.copy({ data: f64([1, 3.140625]), offset: 0, strides: [1] }, [2], halves, 0);
    assert.deepEqual([...halves], [0x3f80, 0x4049]);
    const back = new Float32Array(2);
    ref.copy({ data: halves, offset: 0, strides: [1] }, [2], back, 0);
    assert.deepEqual([...back], [1, 3.140625]);
    const fromBool = new Float32Array(2);
    ref.copy({ data: Uint8Array.from([1, 0]), offset: 0, strides: [1] }, [2], fromBool, 0);
    assert.deepEqual([...fromBool], [1, 0]);
  });
});

describe("unary", () => {
  const run = (op: UnaryOp, xs: number[], p0?: number, p1?: number): Float64Array => {
    const out = new Float64Array(xs.length);
    ref.unary(op, f64(xs), 0, out, xs.length, p0, p1);
    return out;
  };

  it("matches hand-computed values", () => {
    close(run("neg", [1, -2]), [-1, 2]);
    close(run("abs", [-3, 0, 2]), [3, 0, 2]);
    close(run("sqrt", [4, 2]), [2, Math.SQRT2]);
    close(run("rsqrt", [4]), [0.5]);
    close(run("exp", [0, 1]), [1, Math.E]);
    close(run("log", [1, Math.E, 0]), [0, 1, -Infinity]);
    close(run("tanh", [0, 1]), [0, (Math.E - 1 / Math.E) / (Math.E + 1 / Math.E)]);
    close(run("sigmoid", [0, 2]), [0.5, 1 / (1 + Math.exp(-2))]);
    close(run("relu", [-1, 0, 3, NaN]), [0, 0, 3, NaN]);
    // Φ(1) = 0.841344746068542948…, Φ(−1) = 1 − Φ(1).
    close(run("gelu", [1, -1, 0]), [0.8413447460685429, -0.15865525393145707, 0], 1e-14);
    // 0.5 · (1 + tanh(√(2/π) · 1.044715))
    close(run("gelu_tanh", [1]), [0.8411919906082768], 1e-14);
    close(run("silu", [1]), [1 / (1 + Math.exp(-1))]);
    close(run("sign", [-2, 0, 5, NaN]), [-1, 0, 1, 0]);
    close(run("reciprocal", [4]), [0.25]);
    close(run("square", [-3]), [9]);
    close(run("pow_scalar", [2, 9], 0.5), [Math.SQRT2, 3]);
    close(run("clamp", [-5, 0.5, 5, NaN], -1, 1), [-1, 0.5, 1, NaN]);
    close(run("clamp", [-5, 5], -Infinity, 1), [-5, 1]);
    close(run("add_scalar", [1], 2), [3]);
    close(run("mul_scalar", [1.5], 2), [3]);
    close(run("rsub_scalar", [1], 2), [1]);
    close(run("rdiv_scalar", [4], 2), [0.5]);
  });

  it("reads from xOffset and rounds into float32 outputs", () => {
    const out = new Float32Array(1);
    ref.unary("mul_scalar", f64([9, 0.1]), 1, out, 1, 3);
    assert.equal(out[0], Math.fround(0.30000000000000004));
  });
});

describe("unaryGrad", () => {
  const xs = [-1.3, -0.4, 0.3, 0.9, 2.1];
  // Ops whose derivative is read from the output y rather than the input x.
  const fromOutput = new Set<UnaryGradOp>(["tanh", "sigmoid", "exp", "sqrt", "rsqrt", "reciprocal"]);
  const cases: [UnaryGradOp, UnaryOp, number[], number?, number?][] = [
    ["relu", "relu", xs],
    ["gelu", "gelu", xs],
    ["gelu_tanh", "gelu_tanh", xs],
    ["silu", "silu", xs],
    ["abs", "abs", xs],
    ["pow_scalar", "pow_scalar", [0.3, 0.9, 2.1], 2.5],
    ["clamp", "clamp", xs, -1, 1],
    ["tanh", "tanh", xs],
    ["sigmoid", "sigmoid", xs],
    ["exp", "exp", xs],
    ["sqrt", "sqrt", [0.3, 0.9, 2.1]],
    ["rsqrt", "rsqrt", [0.3, 0.9, 2.1]],
    ["reciprocal", "reciprocal", xs],
  ];

  for (const [gradOp, op, inputs, p0, p1] of cases) {
    it(`${gradOp} matches a central finite difference of the forward`, () => {
      const n = inputs.length;
      const g = f64(inputs.map((_, i) => 0.5 + i));
      const y = new Float64Array(n);
      ref.unary(op, f64(inputs), 0, y, n, p0, p1);
      const saved = fromOutput.has(gradOp) ? y : f64(inputs);
      const out = new Float64Array(n);
      ref.unaryGrad(gradOp, g, saved, 0, out, n, p0, p1);
      const h = 1e-6;
      const expected = inputs.map((x, i) => {
        const ya = new Float64Array(1);
        const yb = new Float64Array(1);
        ref.unary(op, f64([x + h]), 0, ya, 1, p0, p1);
        ref.unary(op, f64([x - h]), 0, yb, 1, p0, p1);
        return (g[i] * (ya[0] - yb[0])) / (2 * h);
      });
      close(out, expected, 1e-7, gradOp);
    });
  }

  it("follows PyTorch at the kinks and edges", () => {
    const out = new Float64Array(4);
    ref.unaryGrad("abs", f64([1, 1, 1, 1]), f64([0, -0, NaN, -3]), 0, out, 4);
    assert.deepEqual([...out], [0, 0, 0, -1]);
    ref.unaryGrad("relu", f64([1, 1, 1, 1]), f64([0, -2, 5, NaN]), 0, out, 4);
    assert.deepEqual([...out], [0, 0, 1, 1]);
    // clamp passes the gradient at both bounds inclusive.
    ref.unaryGrad("clamp", f64([1, 1, 1, 1]), f64([-1, 1, 1.5, -2]), 0, out, 4, -1, 1);
    assert.deepEqual([...out], [1, 1, 0, 0]);
    // x ** 0 has gradient 0 even at x = 0.
    ref.unaryGrad("pow_scalar", f64([1, 1, 1, 1]), f64([0, 2, -1, 3]), 0, out, 4, 0);
    assert.deepEqual([...out], [0, 0, 0, 0]);
    // A masked-out infinite gradient gives 0, not NaN.
    ref.unaryGrad("relu", f64([Infinity]), f64([-1]), 0, out, 1);
    assert.equal(out[0], 0);
  });
});

describe("binary and where", () => {
  it("broadcasts through zero strides", () => {
    // [2,1] + [3] → [2,3]
    const a = { data: f64([10, 20]), offset: 0, strides: [1, 0] };
    const b = { data: f64([1, 2, 3]), offset: 0, strides: [0, 1] };
    const out = new Float64Array(6);
    ref.binary("add", a, b, [2, 3], out);
    assert.deepEqual([...out], [11, 12, 13, 21, 22, 23]);
    ref.binary("sub", a, b, [2, 3], out);
    assert.deepEqual([...out], [9, 8, 7, 19, 18, 17]);
    ref.binary("mul", a, b, [2, 3], out);
    assert.deepEqual([...out], [10, 20, 30, 20, 40, 60]);
    ref.binary("div", a, b, [2, 3], out);
    close(out, [10, 5, 10 / 3, 20, 10, 20 / 3]);
    ref.binary("pow", a, b, [2, 3], out);
    assert.deepEqual([...out], [10, 100, 1000, 20, 400, 8000]);
  });

  it("writes comparisons and logical ops as bool", () => {
    const a = contiguous(f64([1, 2, 3, NaN]), [4]);
    const b = contiguous(f64([2, 2, 2, NaN]), [4]);
    const out = new Uint8Array(4);
    const expect: Record<string, number[]> = {
      eq: [0, 1, 0, 0],
      ne: [1, 0, 1, 1],
      lt: [1, 0, 0, 0],
      le: [1, 1, 0, 0],
      gt: [0, 0, 1, 0],
      ge: [0, 1, 1, 0],
    };
    for (const [op, values] of Object.entries(expect)) {
      ref.binary(op as "eq", a, b, [4], out);
      assert.deepEqual([...out], values, op);
    }
    const p = contiguous(Uint8Array.from([0, 0, 1, 1]), [4]);
    const q = contiguous(Uint8Array.from([0, 1, 0, 1]), [4]);
    ref.binary("logical_and", p, q, [4], out);
    assert.deepEqual([...out], [0, 0, 0, 1]);
    ref.binary("logical_or", p, q, [4], out);
    assert.deepEqual([...out], [0, 1, 1, 1]);
  });

  it("propagates NaN through maximum/minimum and truncates integer division", () => {
    const out = new Float64Array(3);
    ref.binary("maximum", contiguous(f64([1, NaN, -2]), [3]), contiguous(f64([2, 0, -3]), [3]), [3], out);
    close(out, [2, NaN, -2]);
    ref.binary("minimum", contiguous(f64([1, NaN, -2]), [3]), contiguous(f64([2, 0, -3]), [3]), [3], out);
    close(out, [1, NaN, -3]);
    const ints = new Int32Array(3);
    ref.binary("div", contiguous(Int32Array.from([7, -7, 6]), [3]), contiguous(Int32Array.from([2, 2, 3]), [3]), [3], ints);
    assert.deepEqual([...ints], [3, -3, 2]);
    ref.binary("mul", contiguous(Int32Array.from([65536, 3, -4]), [3]), contiguous(Int32Array.from([65536, 5, 6]), [3]), [3], ints);
    assert.deepEqual([...ints], [0, 15, -24]);
  });

  it("selects with where, broadcasting the condition", () => {
    const cond = { data: Uint8Array.from([1, 0]), offset: 0, strides: [0, 1] };
    const a = contiguous(f64([1, 2, 3, 4]), [2, 2]);
    const b = { data: f64([-1]), offset: 0, strides: [0, 0] };
    const out = new Float64Array(4);
    ref.where(cond, a, b, [2, 2], out);
    assert.deepEqual([...out], [1, -1, 3, -1]);
  });
});

describe("reduce", () => {
  // x[o, s, i] = 100·o + 10·s + i over [2, 3, 2]
  const x = f64([0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121]);

  it("sums and multiplies along the middle axis", () => {
    const out = new Float64Array(4);
    ref.reduce("sum", x, 0, 2, 3, 2, out, null);
    assert.deepEqual([...out], [30, 33, 330, 333]);
    ref.reduce("prod", f64([1, 2, 3, 4, 5, 6]), 0, 1, 3, 2, out, null);
    assert.deepEqual([...out].slice(0, 2), [15, 48]);
  });

  it("gives 0 and 1 for empty sums and products", () => {
    const out = f64([9, 9]);
    ref.reduce("sum", f64([]), 0, 1, 0, 2, out, null);
    assert.deepEqual([...out], [0, 0]);
    ref.reduce("prod", f64([]), 0, 2, 0, 1, out, null);
    assert.deepEqual([...out], [1, 1]);
  });

  it("finds the first extreme, and NaN as the extreme", () => {
    const values = new Float64Array(3);
    const indices = new Int32Array(3);
    // Three rows of 4 laid out [3, 4, 1]: ties, a NaN, a negative row.
    const data = f64([1, 3, 3, 2, 5, NaN, 7, NaN, -4, -1, -1, -9]);
    ref.reduce("max", data, 0, 3, 4, 1, values, indices);
    close(values, [3, NaN, -1]);
    assert.deepEqual([...indices], [1, 1, 1]);
    ref.reduce("min", data, 0, 3, 4, 1, values, indices);
    close(values, [1, NaN, -9]);
    assert.deepEqual([...indices], [0, 1, 3]);
  });

  it("honours xOffset and computes sumSquares in float64", () => {
    const out = new Float64Array(1);
    ref.reduce("sum", f64([100, 1, 2]), 1, 1, 2, 1, out, null);
    assert.equal(out[0], 3);
    assert.equal(ref.sumSquares(Float32Array.from([9, 3, 4]), 1, 2), 25);
  });
});

describe("matmul", () => {
  const base = {
    aOffset: 0,
    bOffset: 0,
    outOffset: 0,
    aBatchStride: 0,
    bBatchStride: 0,
    alpha: 1,
    beta: 0,
  };

  it("multiplies row-major matrices", () => {
    // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
    const out = new Float64Array(4);
    ref.matmul({
      ...base, batch: 1, m: 2, n: 2, k: 3,
      a: f64([1, 2, 3, 4, 5, 6]), aRowStride: 3, aColStride: 1,
      b: f64([7, 8, 9, 10, 11, 12]), bRowStride: 2, bColStride: 1,
      out,
    });
    assert.deepEqual([...out], [58, 64, 139, 154]);
  });

  it("reads transposed operands through strides", () => {
    // Aᵀ with A = [[1,4],[2,5],[3,6]] stored row-major, Bᵀ with B = [[7,9,11],[8,10,12]].
    const out = new Float64Array(4);
    ref.matmul({
      ...base, batch: 1, m: 2, n: 2, k: 3,
      a: f64([1, 4, 2, 5, 3, 6]), aRowStride: 1, aColStride: 2,
      b: f64([7, 9, 11, 8, 10, 12]), bRowStride: 1, bColStride: 3,
      out,
    });
    assert.deepEqual([...out], [58, 64, 139, 154]);
  });

  it("broadcasts over the batch, and applies alpha and beta", () => {
    // Two batches of A (2x2) times one shared B (2x1).
    const out = f64([NaN, NaN, NaN, NaN]);
    ref.matmul({
      ...base, batch: 2, m: 2, n: 1, k: 2,
      a: f64([1, 0, 0, 1, 2, 3, 4, 5]), aRowStride: 2, aColStride: 1, aBatchStride: 4,
      b: f64([10, 1]), bRowStride: 1, bColStride: 1, bBatchStride: 0,
      out,
    });
    assert.deepEqual([...out], [10, 1, 23, 45]);
    ref.matmul({
      ...base, batch: 1, m: 1, n: 1, k: 2, alpha: 2, beta: 1,
      a: f64([1, 2]), aRowStride: 2, aColStride: 1,
      b: f64([3, 4]), bRowStride: 1, bColStride: 1,
      out, outOffset: 3,
    });
    assert.equal(out[3], 45 + 2 * 11);
  });
});

describe("softmax", () => {
  it("matches exp(x)/Σexp(x) and its log, stably for large inputs", () => {
    const out = new Float64Array(6);
    ref.softmax(f64([1, 2, 3, 1000, 1001, 1002]), 0, 2, 3, false, out);
    const z = Math.exp(1) + Math.exp(2) + Math.exp(3);
    const p = [Math.exp(1) / z, Math.exp(2) / z, Math.exp(3) / z];
    close(out, [...p, ...p], 1e-14);
    ref.softmax(f64([1, 2, 3]), 0, 1, 3, true, out);
    close(out.subarray(0, 3), p.map(Math.log), 1e-14);
  });

  it("backward: for a one-hot upstream gradient e_k, dx_j = y_j(δ_jk − y_k)", () => {
    const y = new Float64Array(3);
    ref.softmax(f64([0.5, -1, 2]), 0, 1, 3, false, y);
    const out = new Float64Array(3);
    ref.softmaxBackward(f64([0, 1, 0]), y, 1, 3, false, out);
    close(out, [-y[0] * y[1], y[1] * (1 - y[1]), -y[2] * y[1]], 1e-14);
    // log_softmax: dx_j = δ_jk − softmax_j.
    const logY = new Float64Array(3);
    ref.softmax(f64([0.5, -1, 2]), 0, 1, 3, true, logY);
    ref.softmaxBackward(f64([0, 1, 0]), logY, 1, 3, true, out);
    close(out, [-y[0], 1 - y[1], -y[2]], 1e-14);
  });
});

describe("layerNorm", () => {
  it("normalises rows by their mean and biased variance", () => {
    const out = new Float64Array(4);
    const mean = new Float64Array(1);
    const rstd = new Float64Array(1);
    ref.layerNorm(f64([1, 2, 3, 4]), 1, 4, f64([1, 2, 1, 1]), f64([0, 0, 0, 5]), 0, out, mean, rstd);
    // mean 2.5, biased variance 1.25
    const s = 1 / Math.sqrt(1.25);
    close(mean, [2.5]);
    close(rstd, [s]);
    close(out, [-1.5 * s, -0.5 * s * 2, 0.5 * s, 1.5 * s + 5], 1e-14);
  });

  it("backward matches central finite differences of Σ g·out", () => {
    const rows = 2;
    const cols = 3;
    const x = f64([0.3, -1.2, 2.0, 1.1, 0.4, -0.7]);
    const w = f64([1.5, -0.5, 2]);
    const b = f64([0.1, 0.2, 0.3]);
    const g = f64([0.7, -0.2, 1.3, -1.1, 0.5, 0.9]);
    const eps = 1e-5;
    const loss = (xv: Float64Array, wv: Float64Array, bv: Float64Array): number => {
      const out = new Float64Array(rows * cols);
      ref.layerNorm(xv, rows, cols, wv, bv, eps, out, new Float64Array(rows), new Float64Array(rows));
      return out.reduce((acc, v, i) => acc + v * g[i], 0);
    };
    const numeric = (arr: Float64Array): number[] =>
      [...arr].map((_, i) => {
        const h = 1e-6;
        const old = arr[i];
        arr[i] = old + h;
        const up = loss(x, w, b);
        arr[i] = old - h;
        const down = loss(x, w, b);
        arr[i] = old;
        return (up - down) / (2 * h);
      });
    const mean = new Float64Array(rows);
    const rstd = new Float64Array(rows);
    ref.layerNorm(x, rows, cols, w, b, eps, new Float64Array(rows * cols), mean, rstd);
    const gx = new Float64Array(rows * cols);
    const gw = new Float64Array(cols);
    const gb = new Float64Array(cols);
    ref.layerNormBackward(g, x, rows, cols, w, mean, rstd, gx, gw, gb);
    close(gx, numeric(x), 1e-6, "gradX");
    close(gw, numeric(w), 1e-6, "gradWeight");
    close(gb, numeric(b), 1e-6, "gradBias");
  });
});

describe("indexing", () => {
  // x[o, s, i] = 100·o + 10·s + i over [2, 3, 2]
  const x = f64([0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121]);

  it("indexSelect picks along the middle axis and indexAdd accumulates back", () => {
    const index = Int32Array.from([2, 0, 2]);
    const out = new Float64Array(12);
    ref.indexSelect(x, 2, 3, 2, index, out);
    assert.deepEqual([...out], [20, 21, 0, 1, 20, 21, 120, 121, 100, 101, 120, 121]);
    const acc = new Float64Array(12).fill(1);
    ref.indexAdd(f64([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), 2, 3, 2, index, acc);
    assert.deepEqual([...acc], [4, 5, 1, 1, 7, 9, 10, 11, 1, 1, 19, 21]);
  });

  it("gather and scatterAdd follow torch.gather along the middle axis", () => {
    // Along dim 1 of x[2, 3, 2]; index [2, 1, 2].
    const index = Int32Array.from([2, 0, 1, 1]);
    const out = new Float64Array(4);
    ref.gather(x, 2, 3, 2, index, 1, out);
    assert.deepEqual([...out], [20, 1, 110, 111]);
    const acc = new Float64Array(12);
    ref.scatterAdd(f64([1, 2, 3, 4]), 2, 3, 2, Int32Array.from([2, 2, 1, 1]), 1, acc);
    assert.deepEqual([...acc], [0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0]);
  });

  it("triangle keeps the lower or upper part relative to the diagonal", () => {
    const m = f64([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const out = new Float64Array(9);
    ref.triangle(m, 1, 3, 3, 0, false, out);
    assert.deepEqual([...out], [1, 0, 0, 4, 5, 0, 7, 8, 9]);
    ref.triangle(m, 1, 3, 3, 1, true, out);
    assert.deepEqual([...out], [0, 2, 3, 0, 0, 6, 0, 0, 0]);
    ref.triangle(m, 1, 3, 3, -1, false, out);
    assert.deepEqual([...out], [0, 0, 0, 4, 0, 0, 7, 8, 0]);
    const batched = new Float64Array(8);
    ref.triangle(f64([1, 2, 3, 4, 5, 6, 7, 8]), 2, 2, 2, 0, true, batched);
    assert.deepEqual([...batched], [1, 2, 0, 4, 5, 6, 0, 8]);
  });
});

describe("optimizer steps", () => {
  const adam = {
    lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, maximize: false,
  };

  it("Adam's first step moves each parameter by about lr against its gradient's sign", () => {
    const param = f64([1, 1]);
    const expAvg = new Float64Array(2);
    const expAvgSq = new Float64Array(2);
    ref.adamStep({ ...adam, n: 2, param, grad: f64([0.5, -2]), expAvg, expAvgSq, maxExpAvgSq: null, step: 1 });
    close(expAvg, [0.05, -0.2]);
    close(expAvgSq, [0.001 * 0.25, 0.001 * 4]);
    // m̂ = g, v̂ = g², so the update is lr · g / (|g| + eps).
    close(param, [1 - (0.1 * 0.5) / (0.5 + 1e-8), 1 + (0.1 * 2) / (2 + 1e-8)]);
  });

  it("Adam's second step, L2 and decoupled weight decay, amsgrad and maximize", () => {
    const two = (options: { weightDecay?: number; decoupled?: boolean; amsgrad?: boolean; maximize?: boolean }) => {
      const param = f64([2]);
      const expAvg = new Float64Array(1);
      const expAvgSq = new Float64Array(1);
      const maxSq = options.amsgrad ? new Float64Array(1) : null;
      const args = { ...adam, ...options, n: 1, param, expAvg, expAvgSq, maxExpAvgSq: maxSq };
      ref.adamStep({ ...args, grad: f64([1]), step: 1 });
      ref.adamStep({ ...args, grad: f64([0.01]), step: 2 });
      return param[0];
    };
    // Hand-unrolled Adam with g1 = 1, g2 = 0.01 (plus wd·p for L2 decay, on the gradient).
    const unrolled = (wd: number, decoupled: boolean, amsgrad: boolean, sign: number): number => {
      let p = 2;
      let m = 0;
      let v = 0;
      let vmax = 0;
      [1, 0.01].forEach((g0, t) => {
        let g = sign * g0;
        if (decoupled) p *= 1 - 0.1 * wd;
        else g += wd * p;
        m = 0.9 * m + 0.1 * g;
        v = 0.999 * v + 0.001 * g * g;
        vmax = Math.max(vmax, v);
        const step = t + 1;
        const mhat = m / (1 - 0.9 ** step);
        const vhat = (amsgrad ? vmax : v) / (1 - 0.999 ** step);
        p -= (0.1 * mhat) / (Math.sqrt(vhat) + 1e-8);
      });
      return p;
    };
    close([two({})], [unrolled(0, false, false, 1)]);
    close([two({ weightDecay: 0.5 })], [unrolled(0.5, false, false, 1)]);
    close([two({ weightDecay: 0.5, decoupled: true })], [unrolled(0.5, true, false, 1)]);
    close([two({ amsgrad: true })], [unrolled(0, false, true, 1)]);
    close([two({ maximize: true })], [unrolled(0, false, false, -1)]);
    // amsgrad differs from plain Adam here because v shrinks on the second step.
    assert.notEqual(two({ amsgrad: true }), two({}));
  });

  it("SGD with momentum, dampening, nesterov, weight decay and maximize", () => {
    const sgd = { lr: 0.1, momentum: 0.9, dampening: 0, nesterov: false, weightDecay: 0, maximize: false };
    const param = f64([1]);
    const buf = new Float64Array(1);
    ref.sgdStep({ ...sgd, n: 1, param, grad: f64([2]), momentumBuffer: buf, firstStep: true });
    // buf = 2, p = 1 − 0.2
    close(param, [0.8]);
    ref.sgdStep({ ...sgd, n: 1, param, grad: f64([1]), momentumBuffer: buf, firstStep: false });
    // buf = 0.9·2 + 1 = 2.8, p = 0.8 − 0.28
    close(buf, [2.8]);
    close(param, [0.52]);

    const p2 = f64([1]);
    const b2 = new Float64Array(1);
    const nest = { ...sgd, nesterov: true, dampening: 0, n: 1, param: p2, momentumBuffer: b2 };
    ref.sgdStep({ ...nest, grad: f64([2]), firstStep: true });
    // d = 2 + 0.9·2 = 3.8
    close(p2, [1 - 0.38]);
    const p3 = f64([1]);
    const b3 = f64([1]);
    ref.sgdStep({ ...sgd, dampening: 0.5, n: 1, param: p3, grad: f64([2]), momentumBuffer: b3, firstStep: false });
    // buf = 0.9 + 0.5·2 = 1.9
    close(b3, [1.9]);
    close(p3, [1 - 0.19]);

    const p4 = f64([2]);
    ref.sgdStep({ ...sgd, momentum: 0, weightDecay: 0.5, maximize: true, n: 1, param: p4, grad: f64([1]), momentumBuffer: null, firstStep: true });
    // d = −1 + 0.5·2 = 0: maximize negates the gradient, weight decay still pulls toward 0.
    close(p4, [2]);
  });
});
