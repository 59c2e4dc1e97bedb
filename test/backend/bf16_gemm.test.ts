// The bfloat16 GEMM (backend.matmulBf16): each path this CPU can run, against float64 sums of the
// bfloat16-rounded operands, on random shapes (odd sizes, every layout, batches, alpha/beta).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MatmulArgs } from "../../src/backend/backend.js";
import { bf16ToFloat, floatToBf16 } from "../../src/backend/reference/convert.js";
import { Rng, cpuBackend, forEachIsa, forEachThreadCount, referenceBackend, skipWithoutNative } from "./cpu_support.js";

const skip = skipWithoutNative();

interface Case {
  batch: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  bf16A: boolean;
  bf16B: boolean;
  broadcastB: boolean;
  alpha: number;
  beta: number;
  /** Every other element along each stored row (neither stride 1: the packers' general path). */
  strided?: boolean;
}

function operand(rng: Rng, bf16: boolean, length: number): Float32Array | Uint16Array {
  const v = Array.from({ length }, () => rng.normal());
  return bf16 ? Uint16Array.from(v, floatToBf16) : Float32Array.from(v);
}

const valueOf = (x: Float32Array | Uint16Array, i: number) => (x instanceof Uint16Array ? bf16ToFloat(x[i]) : bf16ToFloat(floatToBf16(x[i])));

/** Builds the args over fresh data (one element of offset, rows padded by one) and the float64 answer with its error bound. */
function build(c: Case, rng: Rng): { args: MatmulArgs; expected: Float64Array; bound: Float64Array } {
  const step = c.strided ? 2 : 1;
  const aRows = c.transA ? c.k : c.m, aLd = (c.transA ? c.m : c.k) * step + 1;
  const bRows = c.transB ? c.n : c.k, bLd = (c.transB ? c.k : c.n) * step + 1;
  const a = operand(rng, c.bf16A, 1 + c.batch * aRows * aLd);
  const bBatches = c.broadcastB ? 1 : c.batch;
  const b = operand(rng, c.bf16B, 1 + bBatches * bRows * bLd);
  const out = Float32Array.from({ length: c.batch * c.m * c.n }, () => rng.normal());
  const args: MatmulArgs = {
    batch: c.batch, m: c.m, n: c.n, k: c.k,
    a, aOffset: 1, aRowStride: c.transA ? step : aLd, aColStride: c.transA ? aLd : step, aBatchStride: aRows * aLd,
    b, bOffset: 1, bRowStride: c.transB ? step : bLd, bColStride: c.transB ? bLd : step, bBatchStride: c.broadcastB ? 0 : bRows * bLd,
    out, outOffset: 0, alpha: c.alpha, beta: c.beta,
  };
  const expected = new Float64Array(out.length), bound = new Float64Array(out.length);
  for (let p = 0; p < c.batch; p++)
    for (let i = 0; i < c.m; i++)
      for (let j = 0; j < c.n; j++) {
        let s = 0, abs = 0;
        for (let q = 0; q < c.k; q++) {
          const x = valueOf(a, 1 + p * args.aBatchStride + i * args.aRowStride + q * args.aColStride);
          const y = valueOf(b, 1 + p * args.bBatchStride + q * args.bRowStride + j * args.bColStride);
          s += x * y;
          abs += Math.abs(x * y);
        }
        const o = p * c.m * c.n + i * c.n + j;
        expected[o] = c.alpha * s + (c.beta === 0 ? 0 : c.beta * out[o]);
        // float32 sums in any order: k roundings of at most 2^-24 each, then the alpha/beta write.
        bound[o] = (c.k + 4) * 2 ** -24 * (Math.abs(c.alpha) * abs + Math.abs(c.beta * out[o])) + 1e-30;
      }
  return { args, expected, bound };
}

function randomCases(seed: number, count: number): Case[] {
  const rng = new Rng(seed);
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    cases.push({
      batch: rng.int(1, 3), m: rng.int(1, 40), n: rng.int(1, 70), k: rng.int(1, 45),
      transA: rng.next() < 0.5, transB: rng.next() < 0.5, bf16A: rng.next() < 0.5, bf16B: rng.next() < 0.5,
      broadcastB: rng.next() < 0.3, alpha: rng.pick([1, 1, 0.5]), beta: rng.pick([0, 0, 1, -0.5]),
    });
  }
  // Past every block: k over KC (512) and odd, m over MC (144), n over two 32-column tiles.
  cases.push({ batch: 1, m: 150, n: 67, k: 1031, transA: false, transB: true, bf16A: false, bf16B: true, broadcastB: false, alpha: 1, beta: 0 });
  cases.push({ batch: 2, m: 13, n: 97, k: 515, transA: true, transB: false, bf16A: true, bf16B: false, broadcastB: true, alpha: 1, beta: 1 });
  // Rows of C 4 KiB apart (1024 columns), which the vdpbf16ps kernel writes in tiles of 6 rows:
  // last tiles of 5 rows (one half) and of 10 (a whole half and 4 rows).
  cases.push({ batch: 1, m: 29, n: 1024, k: 40, transA: false, transB: true, bf16A: false, bf16B: false, broadcastB: false, alpha: 0.5, beta: 1 });
  cases.push({ batch: 1, m: 22, n: 1024, k: 33, transA: true, transB: false, bf16A: false, bf16B: true, broadcastB: false, alpha: 1, beta: 0 });
  return cases;
}

function check(run: (args: MatmulArgs) => void, cases: Case[], seed: number): void {
  const rng = new Rng(seed);
  for (const c of cases) {
    const { args, expected, bound } = build(c, rng);
    run(args);
    const out = args.out as Float32Array;
    for (let i = 0; i < out.length; i++) {
      if (!(Math.abs(out[i] - expected[i]) <= bound[i])) {
        assert.fail(`${JSON.stringify(c)}: element ${i} is ${out[i]}, float64 gives ${expected[i]} (bound ${bound[i]})`);
      }
    }
  }
}

describe("bfloat16 GEMM against float64", () => {
  it("reference backend", () => check((a) => referenceBackend.matmulBf16(a), randomCases(1, 12), 11));

  it("portable path on every ISA and thread count", { skip }, () => {
    const cpu = cpuBackend()!;
    assert.ok(cpu.setBf16GemmPath("portable"));
    try {
      forEachIsa(() => forEachThreadCount(() => check((a) => cpu.matmulBf16(a), randomCases(2, 15), 12)));
    } finally {
      cpu.setBf16GemmPath("auto");
    }
  });

  const cpu = skip ? null : cpuBackend();
  const supported = (path: string): boolean => {
    const ok = cpu ? cpu.setBf16GemmPath(path) : false;
    cpu?.setBf16GemmPath("auto");
    return ok;
  };
  const avx = supported("avx512bf16"), amx = supported("amx");
  const forced = (path: string, ok: boolean, why: string, seed: number, count: number) =>
    it(`${path} path on 1 and 2 threads`, { skip: skip || (ok ? false : why) }, () => {
      assert.ok(cpu!.setBf16GemmPath(path));
      try {
        forEachThreadCount(() => check((a) => cpu!.matmulBf16(a), randomCases(seed, count), seed + 10));
      } finally {
        cpu!.setBf16GemmPath("auto");
      }
    });
  forced("avx512bf16", avx, "this CPU has no AVX512_BF16: the vdpbf16ps path cannot run here", 3, 60);
  forced("amx", amx, "this CPU or OS has no AMX-BF16 tiles: the tdpbf16ps path cannot run here", 4, 60);

  it("amx path on the edge sizes of its tiles, every layout, alpha/beta with NaN under beta 0", { skip: skip || (amx ? false : "this CPU or OS has no AMX-BF16 tiles") }, () => {
    assert.ok(cpu!.setBf16GemmPath("amx"));
    try {
      const rng = new Rng(5);
      const sizes = [1, 15, 16, 17, 31, 33, 100];
      const cases: Case[] = [];
      for (const m of sizes)
        for (const n of sizes) {
          const k = rng.pick(sizes);
          cases.push({
            batch: rng.int(1, 2), m, n, k, transA: rng.next() < 0.5, transB: rng.next() < 0.5, bf16A: rng.next() < 0.5, bf16B: rng.next() < 0.5,
            broadcastB: rng.next() < 0.3, alpha: rng.pick([1, 1, 0.5]), beta: rng.pick([0, 0, 1, -0.5]), strided: rng.next() < 0.25,
          });
        }
      // Past every block of the AMX kernel: m over MC (128), n over NC (1024), k over KC (512), odd.
      cases.push({ batch: 1, m: 20, n: 1030, k: 1057, transA: false, transB: true, bf16A: false, bf16B: true, broadcastB: false, alpha: 1, beta: 0 });
      cases.push({ batch: 1, m: 150, n: 20, k: 40, transA: true, transB: true, bf16A: false, bf16B: false, broadcastB: false, alpha: 1, beta: 1 });
      cases.push({ batch: 2, m: 45, n: 33, k: 1030, transA: true, transB: false, bf16A: true, bf16B: false, broadcastB: true, alpha: 1, beta: 1 });
      cases.push({ batch: 1, m: 64, n: 64, k: 2048, transA: false, transB: false, bf16A: false, bf16B: false, broadcastB: false, alpha: 0.5, beta: -0.5 });
      // One k block and n over NC: A packed once for every NC columns (ragged m, n, k; both A layouts).
      cases.push({ batch: 1, m: 150, n: 2100, k: 300, transA: false, transB: true, bf16A: false, bf16B: false, broadcastB: false, alpha: 1, beta: 0 });
      cases.push({ batch: 1, m: 37, n: 1100, k: 45, transA: true, transB: false, bf16A: true, bf16B: false, broadcastB: false, alpha: 0.5, beta: 1 });
      forEachThreadCount(() => {
        check((a) => cpu!.matmulBf16(a), cases, 15);
        // beta == 0 overwrites NaN already in out (whole 16 x 16 tiles and partial ones).
        for (const [m, n, k] of [[32, 32, 64], [17, 33, 5]]) {
          const c: Case = { batch: 1, m, n, k, transA: false, transB: false, bf16A: true, bf16B: false, broadcastB: false, alpha: 1, beta: 0 };
          const { args, expected, bound } = build(c, rng);
          (args.out as Float32Array).fill(NaN);
          cpu!.matmulBf16(args);
          (args.out as Float32Array).forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= bound[i], `${m}x${n}x${k} element ${i}: ${v} vs ${expected[i]}`));
        }
      });
    } finally {
      cpu!.setBf16GemmPath("auto");
    }
  });

  it("auto picks amx, else vdpbf16ps, exactly when the active ISA is avx512 on a CPU that has them", { skip }, () => {
    const c = cpuBackend()!;
    forEachIsa((isa) => assert.equal(c.bf16GemmPath(), isa !== "avx512" ? "portable" : amx ? "amx" : avx ? "avx512bf16" : "portable"));
  });

  it("rejects float64 operands with a message", { skip }, () => {
    const c = cpuBackend()!;
    const args: MatmulArgs = { batch: 1, m: 1, n: 1, k: 1, a: new Float64Array(1), aOffset: 0, aRowStride: 1, aColStride: 1, aBatchStride: 0, b: new Float32Array(1), bOffset: 0, bRowStride: 1, bColStride: 1, bBatchStride: 0, out: new Float32Array(1), outOffset: 0, alpha: 1, beta: 0 };
    assert.throws(() => c.matmulBf16(args), /float32 or bfloat16 operands/);
  });
});
