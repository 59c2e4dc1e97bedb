// cpu vs reference for matmul: layouts, batching, alpha/beta, edges of every block size, threads.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MatmulArgs } from "../../src/backend/backend.js";
import {
  FLOAT_TYPES,
  ISAS,
  Rng,
  assertArraysClose,
  cpuBackend,
  forEachIsa,
  forEachThreadCount,
  randomArray,
  referenceBackend as ref,
  runnableIsas,
  skipWithoutNative,
} from "./cpu_support.js";

const skip = skipWithoutNative();

interface Case {
  batch: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  broadcastA?: boolean;
  broadcastB?: boolean;
  alpha?: number;
  beta?: number;
}

/** Builds MatmulArgs for a case over fresh random storage with offsets and padded rows. */
function build(c: Case, ctor: Float32ArrayConstructor | Float64ArrayConstructor, rng: Rng): { args: MatmulArgs; out0: Float32Array | Float64Array } {
  const pad = rng.int(0, 2);
  // A logical [m, k]; stored [k, m] when transposed. Rows padded by `pad` to test leading dims.
  const aRows = c.transA ? c.k : c.m;
  const aCols = (c.transA ? c.m : c.k) + pad;
  const bRows = c.transB ? c.n : c.k;
  const bCols = (c.transB ? c.k : c.n) + pad;
  const aBatch = c.broadcastA ? 0 : aRows * aCols;
  const bBatch = c.broadcastB ? 0 : bRows * bCols;
  const aOffset = rng.int(0, 5);
  const bOffset = rng.int(0, 5);
  const outOffset = rng.int(0, 5);
  const a = randomArray(ctor, aOffset + Math.max(1, c.broadcastA ? 1 : c.batch) * aRows * aCols, rng);
  const b = randomArray(ctor, bOffset + Math.max(1, c.broadcastB ? 1 : c.batch) * bRows * bCols, rng);
  const beta = c.beta ?? 0;
  const out = randomArray(ctor, outOffset + c.batch * c.m * c.n + 3, rng);
  // beta = 0 must ignore garbage in out, even NaN.
  if (beta === 0) out.fill(NaN, outOffset, outOffset + c.batch * c.m * c.n);
  const args: MatmulArgs = {
    batch: c.batch, m: c.m, n: c.n, k: c.k,
    a, aOffset, aRowStride: c.transA ? 1 : aCols, aColStride: c.transA ? aCols : 1, aBatchStride: aBatch,
    b, bOffset, bRowStride: c.transB ? 1 : bCols, bColStride: c.transB ? bCols : 1, bBatchStride: bBatch,
    out, outOffset, alpha: c.alpha ?? 1, beta,
  };
  return { args, out0: out.slice() };
}

function check(c: Case, ctor: Float32ArrayConstructor | Float64ArrayConstructor, rng: Rng, what: string): void {
  const { args, out0 } = build(c, ctor, rng);
  const want = { ...args, out: out0.slice() };
  ref.matmul(want);
  cpuBackend()!.matmul(args);
  // float32 accumulates in float32: the error grows with k (the reference sums in float64).
  const [atol, rtol] = ctor === Float32Array ? [2e-6 * Math.sqrt(c.k + 1) * 4, 1e-5] : [1e-13 * (c.k + 1), 1e-12];
  assertArraysClose(args.out, want.out, atol, rtol, `${what} ${ctor.name} ${JSON.stringify(c)}`);
}

/** Every case in float32 and float64 on every ISA the machine runs. */
function checkEveryIsaAndType(cases: readonly Case[], rng: Rng): void {
  forEachIsa((isa) => {
    for (const c of cases) for (const ctor of FLOAT_TYPES) check(c, ctor, rng, isa);
  });
}

describe("cpu backend: matmul", { skip }, () => {
  it("random small shapes, both layouts of each operand, alpha and beta, on every ISA", () => {
    const rng = new Rng(11);
    forEachIsa((isa) => {
      for (let t = 0; t < 60; t++) {
        const c: Case = {
          batch: rng.pick([1, 1, 2, 3]),
          m: rng.int(1, 40), n: rng.int(1, 40), k: rng.int(1, 70),
          transA: rng.next() < 0.5, transB: rng.next() < 0.5,
          broadcastA: rng.next() < 0.2, broadcastB: rng.next() < 0.2,
          alpha: rng.pick([1, 1, 0.5, -2]), beta: rng.pick([0, 0, 1, 0.25]),
        };
        check(c, FLOAT_TYPES[t % 2], rng, isa);
      }
    });
  });

  it("sizes that cross every block edge (MR, NR, MC, KC) with remainders", () => {
    const rng = new Rng(12);
    const cases: Case[] = [
      { batch: 1, m: 150, n: 70, k: 600, transA: false, transB: false },
      { batch: 1, m: 97, n: 130, k: 259, transA: true, transB: false, beta: 1 },
      { batch: 1, m: 50, n: 100, k: 300, transA: false, transB: true },
      { batch: 1, m: 145, n: 33, k: 257, transA: true, transB: true, alpha: 0.5, beta: 0.5 },
      { batch: 2, m: 13, n: 49, k: 520, transA: false, transB: true, broadcastB: true },
      // One past and one short of the AVX2 float32 KC (384), each with its beta = 1 accumulation.
      { batch: 1, m: 151, n: 35, k: 385, transA: false, transB: true, beta: 1 },
      { batch: 1, m: 29, n: 47, k: 767, transA: true, transB: false, alpha: 2, beta: 1 },
      // One and two rows take the unpacked row-times-matrix path (generation's vocabulary projection).
      { batch: 1, m: 1, n: 3001, k: 383, transA: false, transB: true },
      { batch: 1, m: 1, n: 2999, k: 130, transA: true, transB: false, alpha: 0.5, beta: 0.25 },
      { batch: 3, m: 2, n: 517, k: 67, transA: false, transB: true, broadcastB: true, beta: 1 },
      { batch: 2, m: 2, n: 70, k: 301, transA: true, transB: false, broadcastA: true, alpha: -2 },
    ];
    forEachIsa((isa) => {
      for (const [i, c] of cases.entries()) check(c, FLOAT_TYPES[i % 2], rng, isa);
    });
  });

  it("a small row-major A read in place (attention's p @ v and q @ k.T), at the edges of that path", () => {
    // In float32 on AVX-512 and AVX2, N within 8 slivers (256 / 128 columns) reads A where it lies,
    // however many rows, K in passes (KC 256 / 384); one column past packs it, as does a transposed
    // A. The portable path and float64 pack A for all of these: the same cases check them against
    // the reference.
    // A row-major B of whole slivers (32 or 64 columns) is read in place as well.
    const rng = new Rng(19);
    const cases: Case[] = [
      { batch: 4, m: 128, n: 64, k: 128, transA: false, transB: false },
      { batch: 2, m: 50, n: 32, k: 77, transA: false, transB: false, beta: 0.5 },
      { batch: 1, m: 301, n: 96, k: 200, transA: false, transB: false, alpha: 0.5 },
      { batch: 1, m: 1000, n: 16, k: 256, transA: false, transB: true, beta: 1 },
      { batch: 4, m: 128, n: 128, k: 64, transA: false, transB: true, alpha: 0.125 },
      { batch: 1, m: 144, n: 128, k: 256, transA: false, transB: false, beta: 1 },
      { batch: 1, m: 145, n: 129, k: 257, transA: false, transB: true, beta: 0.5 },
      { batch: 2, m: 13, n: 65, k: 384, transA: false, transB: false, broadcastB: true },
      { batch: 2, m: 31, n: 33, k: 385, transA: false, transB: true, alpha: -2, beta: 0.25 },
      { batch: 1, m: 40, n: 64, k: 384, transA: false, transB: false },
      { batch: 1, m: 40, n: 65, k: 200, transA: false, transB: true },
      { batch: 3, m: 7, n: 17, k: 9, transA: false, transB: false, broadcastA: true, beta: 1 },
      { batch: 1, m: 40, n: 256, k: 100, transA: false, transB: false, alpha: 2 },
      { batch: 1, m: 30, n: 257, k: 60, transA: false, transB: true, beta: 1 },
      { batch: 1, m: 25, n: 192, k: 300, transA: false, transB: true },
    ];
    checkEveryIsaAndType(cases, rng);
  });

  it("a column-major A read in place (a weight's gradient g.T @ x), at the edges of that path", () => {
    // In float32 on AVX-512, a transposed A against at most 8 slivers (256 columns) is read where it
    // lies, any M, K in passes of up to 1024 (256 at 256 columns, so 1025 is five); B too where its
    // rows are whole slivers at most 1 KiB apart (the random row padding moves 256 columns either
    // side of that), else packed (50 columns, a transposed B). One column past 8 slivers takes the
    // blocked loop. On AVX2 the same up to 8 slivers of 16 (128 columns, 129 past it), B always
    // packed, K in passes of 384 (700 is two, 2100 six). The portable ISA and float64 pack: the same
    // cases check them against the reference.
    const rng = new Rng(21);
    const cases: Case[] = [
      { batch: 1, m: 64, n: 64, k: 1024, transA: true, transB: false },
      { batch: 1, m: 193, n: 256, k: 1025, transA: true, transB: false, beta: 0.5 },
      { batch: 1, m: 100, n: 50, k: 700, transA: true, transB: false, alpha: -2 },
      { batch: 1, m: 300, n: 96, k: 2100, transA: true, transB: false, beta: 1 },
      { batch: 1, m: 37, n: 257, k: 300, transA: true, transB: false },
      { batch: 1, m: 13, n: 32, k: 5, transA: true, transB: true, beta: 0.25 },
      { batch: 2, m: 30, n: 64, k: 65, transA: true, transB: false, broadcastA: true },
      { batch: 1, m: 1, n: 64, k: 100, transA: true, transB: false },
      { batch: 1, m: 71, n: 128, k: 769, transA: true, transB: false, beta: 2 },
      { batch: 1, m: 71, n: 129, k: 769, transA: true, transB: false },
      // A's columns 4 KiB apart (AVX2 packs them: the blocked loop) or 4 bytes more (read in place),
      // as the random row padding falls.
      { batch: 1, m: 1024, n: 64, k: 40, transA: true, transB: false },
      { batch: 1, m: 1024, n: 64, k: 40, transA: true, transB: false, beta: 1 },
    ];
    checkEveryIsaAndType(cases, rng);
    // On 2 threads each part is such a product of its own: rows split (many tiles of rows), or
    // columns split where the slivers outnumber them (12 x 128: parts of B's columns at an offset;
    // each product over the 2 Mi multiply-adds under which matmul.cc keeps one thread).
    const split: Case[] = [cases[0], cases[2], { batch: 1, m: 12, n: 128, k: 1500, transA: true, transB: false, beta: 0.5 }];
    forEachThreadCount(() => checkEveryIsaAndType(split, rng));
  });

  it("C's rows a multiple of 4 KiB apart (tiles written in halves on AVX-512), with edge tiles on each side of a half", () => {
    // 1024 floats or 512 doubles a row; last tiles of 5 rows (under the 6-row half) and of 9 (over
    // it); K over one pass, so later passes accumulate onto the halves' output.
    const rng = new Rng(20);
    const cases: Case[] = [
      { batch: 1, m: 137, n: 1024, k: 70, transA: false, transB: false },
      { batch: 1, m: 141, n: 1024, k: 300, transA: true, transB: false, beta: 0.5 },
      { batch: 1, m: 150, n: 512, k: 64, transA: true, transB: true, alpha: 2 },
      { batch: 2, m: 29, n: 1024, k: 33, transA: false, transB: false, beta: 1 },
    ];
    checkEveryIsaAndType(cases, rng);
  });

  it("the blocked loop's K in equal passes of whole vectors, each layout, with the next sliver prefetched", () => {
    // More than MC rows, so the blocked loop: K that splits unevenly over passes (1000 is three
    // passes of 336/336/328 at the AVX2 float32 KC of 384, four of 252/252/248/248 for float64),
    // one past a multiple of both KCs, and N with an edge sliver, so the last sliver has no next.
    const rng = new Rng(16);
    const cases: Case[] = [
      { batch: 1, m: 150, n: 100, k: 1000, transA: false, transB: false, beta: 1 },
      { batch: 1, m: 160, n: 40, k: 1537, transA: true, transB: false, alpha: 0.5 },
      { batch: 1, m: 145, n: 17, k: 769, transA: false, transB: true, beta: 0.25 },
      { batch: 2, m: 151, n: 33, k: 770, transA: true, transB: true, broadcastB: true },
    ];
    checkEveryIsaAndType(cases, rng);
  });

  it("the blocked loop's M in equal blocks of whole tiles, each layout, with edge tiles", () => {
    // Over MC rows, M is cut into equal blocks of whole MR-row tiles: at the AVX2 float32 MC of 144,
    // 289 rows are 102 + 102 + 85, 433 are 3 x 114 + 91, 145 are 78 + 67 (float64, MC 96: 289 are
    // 3 x 78 + 55), so blocks start off multiples of MC and the last one ends in a short tile.
    const rng = new Rng(17);
    const cases: Case[] = [
      { batch: 1, m: 289, n: 37, k: 70, transA: false, transB: false, beta: 1 },
      { batch: 1, m: 433, n: 20, k: 41, transA: true, transB: false, alpha: -0.5 },
      { batch: 1, m: 145, n: 50, k: 400, transA: false, transB: true, beta: 0.25 },
      { batch: 2, m: 300, n: 17, k: 33, transA: true, transB: true, broadcastA: true },
    ];
    checkEveryIsaAndType(cases, rng);
  });

  it("row-major A and transposed B packed by register transposes: whole slivers, K around whole vectors", () => {
    // AVX2 and AVX-512 pack a row-major A (MR rows) and a transposed B (NR columns) in W x W
    // register transposes over the whole vectors of K and one value at a time after them; each
    // transpose's rows spill past the sliver's MR values and must be overwritten (the last one into
    // the buffer's slack). M of whole AVX-512 (12) and AVX2 (6) tiles, with and without an edge tile,
    // N of whole 32- and 16-column slivers and one past, K at, one short of and one past 16 and 32.
    const rng = new Rng(18);
    const cases: Case[] = [];
    for (const k of [15, 16, 17, 31, 32, 33, 257]) {
      cases.push({ batch: 1, m: 24, n: 64, k, transA: false, transB: true });
      cases.push({ batch: 1, m: 36, n: 65, k, transA: false, transB: false, beta: 1 });
      cases.push({ batch: 1, m: 25, n: 32, k, transA: true, transB: true, alpha: -0.5 });
    }
    // Over MC rows: the blocked loop packs several A blocks of whole tiles and B blocks of slivers.
    cases.push({ batch: 1, m: 156, n: 96, k: 300, transA: false, transB: true, beta: 0.25 });
    cases.push({ batch: 1, m: 300, n: 97, k: 48, transA: false, transB: false });
    checkEveryIsaAndType(cases, rng);
  });

  it("few rows of A against a transposed B: K in several equal passes, at and around MC rows", () => {
    // On AVX2 float32, at most MC (144) rows with B's columns contiguous take K in passes of up to
    // 1024 split evenly (2100 -> 704 + 704 + 692, 1030 -> 520 + 510); a pass must accumulate onto
    // the previous ones (beta 1 after the first) and every sliver edge still applies.
    const rng = new Rng(16);
    const cases: Case[] = [
      { batch: 1, m: 70, n: 45, k: 2100, transA: false, transB: true, beta: 0.5 },
      { batch: 1, m: 144, n: 33, k: 1030, transA: false, transB: true, alpha: -1 },
      { batch: 1, m: 143, n: 17, k: 1025, transA: true, transB: true, beta: 1 },
      { batch: 1, m: 145, n: 31, k: 1031, transA: false, transB: true },
      { batch: 1, m: 3, n: 16, k: 1024, transA: false, transB: true },
      { batch: 1, m: 64, n: 64, k: 1023, transA: false, transB: true, beta: 1 },
    ];
    forEachIsa((isa) => {
      for (const c of cases) check(c, Float32Array, rng, isa);
      check(cases[0], Float64Array, rng, isa);
    });
  });

  it("few rows of A against a row-major B: B packed in chunks of columns, at and around each edge", () => {
    // On AVX2 float32, at most MC (144) rows against B with contiguous rows, where min(k, KC) x n
    // is over 2 x 384 x 256, pack B 256 columns at a time (the next chunk prefetched under the
    // tiles): chunks past the first, a last chunk of a few columns or a partial sliver, K passes
    // with beta 1 after the first, fewer than MR rows, and the shapes just outside (one row past MC,
    // a block of exactly two chunks) must all still agree.
    const rng = new Rng(17);
    const cases: Case[] = [
      { batch: 1, m: 64, n: 784, k: 500, transA: false, transB: false },
      { batch: 1, m: 3, n: 1100, k: 200, transA: false, transB: false },
      { batch: 1, m: 6, n: 520, k: 385, transA: false, transB: false, beta: 1 },
      { batch: 1, m: 7, n: 600, k: 769, transA: true, transB: false, alpha: -0.5, beta: 0.25 },
      { batch: 1, m: 143, n: 1031, k: 200, transA: false, transB: false, beta: 1 },
      { batch: 1, m: 144, n: 519, k: 384, transA: true, transB: false },
      { batch: 1, m: 145, n: 600, k: 390, transA: false, transB: false },
      { batch: 1, m: 30, n: 512, k: 384, transA: false, transB: false },
      { batch: 2, m: 20, n: 1300, k: 160, transA: false, transB: false, broadcastB: true, beta: 1 },
    ];
    forEachIsa((isa) => {
      for (const c of cases) check(c, Float32Array, rng, isa);
      check(cases[3], Float64Array, rng, isa);
    });
    // Two threads split N into uneven parts (131 slivers into 4: 512 columns, the blocked loop, and
    // 528, the chunks).
    forEachThreadCount((threads) => {
      check({ batch: 1, m: 40, n: 2090, k: 400, transA: false, transB: false, beta: 0.5 }, Float32Array, rng, `threads=${threads}`);
    });
  });

  it("degenerate sizes: k = 0 scales out by beta, m/n/batch = 0 write nothing, 1-wide operands", () => {
    const rng = new Rng(13);
    for (const ctor of FLOAT_TYPES) {
      for (const c of [
        { batch: 2, m: 3, n: 4, k: 0, transA: false, transB: false, beta: 0 },
        { batch: 2, m: 3, n: 4, k: 0, transA: false, transB: false, beta: 0.5 },
        { batch: 1, m: 1, n: 1, k: 1, transA: false, transB: false },
        { batch: 1, m: 1, n: 37, k: 20, transA: true, transB: false },
        { batch: 1, m: 37, n: 1, k: 20, transA: false, transB: true },
      ] as Case[]) {
        check(c, ctor, rng, "degenerate");
      }
      const { args, out0 } = build({ batch: 0, m: 3, n: 4, k: 5, transA: false, transB: false }, ctor, rng);
      cpuBackend()!.matmul({ ...args, m: 0 });
      assert.deepEqual(args.out, out0);
    }
  });

  it("the MLP's shapes (batch 64: x @ w.T, g @ w, g.T @ x) with 1 and 2 threads", () => {
    const rng = new Rng(14);
    const cases: Case[] = [
      { batch: 1, m: 64, n: 256, k: 196, transA: false, transB: true },
      { batch: 1, m: 64, n: 196, k: 256, transA: false, transB: false },
      { batch: 1, m: 256, n: 196, k: 64, transA: true, transB: false },
      { batch: 1, m: 64, n: 10, k: 256, transA: false, transB: true },
      { batch: 4, m: 64, n: 64, k: 64, transA: false, transB: true },
    ];
    forEachThreadCount((threads) => {
      for (const c of cases) check(c, Float32Array, rng, `threads=${threads}`);
    });
  });

  it("splits big GEMMs over threads along M and along N", () => {
    const rng = new Rng(15);
    forEachThreadCount((threads) => {
      check({ batch: 1, m: 300, n: 150, k: 64, transA: false, transB: false }, Float32Array, rng, `M split, threads=${threads}`);
      check({ batch: 1, m: 40, n: 400, k: 150, transA: false, transB: true, beta: 1 }, Float64Array, rng, `N split, threads=${threads}`);
    });
  });

  it("big M split over the threads: uneven row parts, K and N block edges, 3 threads", () => {
    // Matrices of hundreds of rows are cut into row parts, one GEMM each: rows not a multiple of
    // MR, K past KC (beta 1 after the first pass), N past NC (4080: a second column block), a
    // broadcast B, float64, and 3 threads; all must agree with the reference.
    const rng = new Rng(18);
    const cases: [Case, Float32ArrayConstructor | Float64ArrayConstructor][] = [
      [{ batch: 1, m: 601, n: 70, k: 400, transA: false, transB: false, beta: 1 }, Float32Array],
      [{ batch: 1, m: 1000, n: 131, k: 100, transA: true, transB: true, alpha: 0.5 }, Float32Array],
      [{ batch: 1, m: 580, n: 4100, k: 9, transA: false, transB: false }, Float32Array],
      [{ batch: 2, m: 600, n: 45, k: 50, transA: false, transB: true, broadcastB: true, beta: 0.25 }, Float32Array],
      [{ batch: 1, m: 575, n: 40, k: 30, transA: false, transB: false }, Float32Array],
      [{ batch: 1, m: 400, n: 50, k: 300, transA: false, transB: false, beta: 1 }, Float64Array],
    ];
    forEachIsa((isa) => {
      forEachThreadCount((threads) => {
        for (const [c, ctor] of cases) check(c, ctor, rng, `${isa} threads=${threads}`);
      });
    });
    const backend = cpuBackend()!;
    const before = backend.getNumThreads();
    try {
      backend.setNumThreads(3);
      check({ batch: 1, m: 900, n: 60, k: 390, transA: false, transB: false }, Float32Array, rng, "threads=3");
    } finally {
      backend.setNumThreads(before);
    }
  });

  it("batches split over 2-8 threads: each matrix and each part of one computed exactly once", () => {
    // The pool gives each thread a contiguous share of the tasks and lets it take the others'
    // from their ends: batches below, at and above the thread count, and beta 0.5 (a task run
    // twice would scale C twice; one never run would leave the NaN that beta 0 must overwrite).
    const rng = new Rng(19);
    const backend = cpuBackend()!;
    const before = backend.getNumThreads();
    try {
      for (const threads of [2, 3, 5, 8]) {
        backend.setNumThreads(threads);
        for (const batch of [1, 2, 3, 4, 5, 7, 8, 9, 13, 17]) {
          const beta = batch % 2 === 0 ? 0.5 : 0;
          check({ batch, m: 192, n: 72, k: 64, transA: false, transB: batch % 3 === 0, beta }, Float32Array, rng, `threads=${threads}`);
        }
        check({ batch: 1, m: 700, n: 40, k: 80, transA: true, transB: false, beta: 0.5 }, Float64Array, rng, `M split, threads=${threads}`);
      }
    } finally {
      backend.setNumThreads(before);
    }
  });

  it("int32 operands go to the reference", () => {
    const a = Int32Array.from([1, 2, 3, 4]);
    const b = Int32Array.from([5, 6, 7, 8]);
    const out = new Int32Array(4);
    cpuBackend()!.matmul({ batch: 1, m: 2, n: 2, k: 2, a, aOffset: 0, aRowStride: 2, aColStride: 1, aBatchStride: 0, b, bOffset: 0, bRowStride: 2, bColStride: 1, bBatchStride: 0, out, outOffset: 0, alpha: 1, beta: 0 });
    assert.deepEqual(Array.from(out), [19, 22, 43, 50]);
  });
});
// forEachIsa silently leaves out what the CPU cannot run, so each accelerated ISA also gets a test of
// its own here: run on the machine at hand, or skipped with a message that says which paths the
// suites above could not cover (issue 16: "a path the machine cannot run is skipped with a message").
describe("cpu backend: every ISA path is tested or named as skipped", { skip }, () => {
  const cpu = cpuBackend();
  const runnable = runnableIsas();
  const needs: Record<string, string> = { avx2: "AVX2 and FMA", avx512: "AVX-512 (F, BW, DQ, VL)" };
  for (const isa of ISAS.filter((i) => i !== "portable")) {
    const why = `this CPU or build has no ${needs[isa]}: the ${isa} kernels cannot run here (the per-ISA suites ran ${runnable.join(", ")})`;
    it(`the ${isa} GEMM runs and matches the reference at its tiles' edges`, { skip: skip || (runnable.includes(isa) ? false : why) }, () => {
      const rng = new Rng(16);
      try {
        assert.ok(cpu!.setIsa(isa));
        assert.equal(cpu!.isa(), isa);
        for (const [m, n, k] of [[1, 1, 1], [13, 33, 17], [145, 257, 385], [64, 1024, 64]]) {
          for (const [transA, transB] of [[false, false], [true, false], [false, true]]) {
            for (const ctor of FLOAT_TYPES) check({ batch: 1, m, n, k, transA, transB }, ctor, rng, isa);
          }
        }
      } finally {
        cpu!.setIsa("auto");
      }
    });
  }
});
