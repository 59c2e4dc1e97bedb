// The fused attention with lowPrecision (autocast: every product on bfloat16 operands, float32
// sums): the cpu kernel on each bfloat16 GEMM path this CPU can run, 1 and 2 threads, against the
// reference backend, which sums the same bfloat16-rounded operands in float64.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AttentionArgs } from "../../src/backend/backend.js";
import { Rng, cpuBackend, forEachThreadCount, referenceBackend, skipWithoutNative } from "./cpu_support.js";

const skip = skipWithoutNative();

interface Case {
  n: number;
  h: number;
  l: number;
  s: number;
  d: number;
  dv: number;
  mask: "none" | "causal" | "bias";
  dropoutP: number;
}

interface Result {
  out: Float32Array;
  lse: Float32Array;
  dq: Float32Array;
  dk: Float32Array;
  dv: Float32Array;
}

function build(c: Case, lowPrecision: boolean, rng: Rng): { args: AttentionArgs; dout: Float32Array } {
  const rows = (count: number, cols: number) => Float32Array.from({ length: c.n * c.h * count * cols }, () => rng.normal());
  const view = (data: Float32Array, count: number, cols: number) => ({ data, offset: 0, strides: [c.h * count * cols, count * cols, cols] });
  const bias = c.mask === "bias" ? Float32Array.from({ length: c.l * c.s }, (_, i) => (i % 7 === 3 ? Number.NEGATIVE_INFINITY : rng.normal())) : null;
  const args: AttentionArgs = {
    n: c.n, h: c.h, l: c.l, s: c.s, d: c.d, dv: c.dv,
    q: view(rows(c.l, c.d), c.l, c.d), k: view(rows(c.s, c.d), c.s, c.d), v: view(rows(c.s, c.dv), c.s, c.dv),
    bias: bias ? { data: bias, offset: 0, strides: [0, 0, c.s, 1] } : null,
    causal: c.mask === "causal", scale: 1 / Math.sqrt(c.d), dropoutP: c.dropoutP, seedLo: 12345, seedHi: 678, lowPrecision,
  };
  return { args, dout: rows(c.l, c.dv) };
}

function runOn(backend: typeof referenceBackend, args: AttentionArgs, dout: Float32Array): Result {
  const sized = (len: number) => new Float32Array(len);
  const heads = args.n * args.h;
  const r: Result = { out: sized(heads * args.l * args.dv), lse: sized(heads * args.l), dq: sized(heads * args.l * args.d), dk: sized(heads * args.s * args.d), dv: sized(heads * args.s * args.dv) };
  backend.attention(args, r.out, r.lse);
  backend.attentionBackward(args, r.out, dout, r.lse, r.dq, r.dk, r.dv);
  return r;
}

/** The largest |x - y| over each output, relative to that output's largest |y|. */
function errors(x: Result, y: Result): Record<string, number> {
  const e: Record<string, number> = {};
  for (const key of ["out", "dq", "dk", "dv"] as const) {
    const scale = Math.max(1e-30, ...Array.from(y[key], Math.abs));
    e[key] = Math.max(...Array.from(x[key], (v, i) => Math.abs(v - y[key][i]))) / scale;
  }
  return e;
}

// Up to 128 keys (one key tile) the kernel rounds the same values as the reference; what is left is
// float32 summation and, rarely, a probability or dS that float32 and float64 round to neighbouring
// bfloat16 values (2^-8 of one term). Rounding the operands at all moves results by about 2^-8 of
// their scale, several times this bound, which the second check below makes sure of.
const TIGHT = 2 ** -12;
// Past 128 keys the kernel rounds exp(score − running max of the earlier tiles): bfloat16 apart.
const LOOSE = 2 ** -6;

const CASES: Case[] = [
  { n: 2, h: 3, l: 9, s: 11, d: 16, dv: 8, mask: "none", dropoutP: 0 },
  { n: 1, h: 2, l: 70, s: 128, d: 32, dv: 24, mask: "causal", dropoutP: 0 },
  { n: 2, h: 1, l: 33, s: 40, d: 8, dv: 8, mask: "bias", dropoutP: 0 },
  { n: 1, h: 2, l: 20, s: 30, d: 16, dv: 16, mask: "none", dropoutP: 0.25 },
];
const LONG: Case = { n: 1, h: 2, l: 140, s: 150, d: 16, dv: 16, mask: "causal", dropoutP: 0 };

function checkAgainstReference(label: string): void {
  const cpu = cpuBackend()!;
  for (const c of [...CASES, LONG]) {
    const { args, dout } = build(c, true, new Rng(c.l * 7 + c.s));
    const ours = runOn(cpu, args, dout);
    const ref = runOn(referenceBackend, args, dout);
    const bound = c === LONG ? LOOSE : TIGHT;
    for (const [key, err] of Object.entries(errors(ours, ref))) {
      assert.ok(err <= bound, `${label} ${JSON.stringify(c)}: ${key} is ${err} of its scale from the reference's (bound ${bound})`);
    }
  }
}

describe("fused attention with bfloat16 products against the float64 reference", () => {
  it("the reference's lowPrecision rounds: apart from float32 attention by more than the bound", () => {
    for (const c of CASES.filter((x) => x.dropoutP === 0)) {
      const rng = () => new Rng(c.l * 7 + c.s);
      const low = build(c, true, rng()), full = build(c, false, rng());
      const e = errors(runOn(referenceBackend, low.args, low.dout), runOn(referenceBackend, full.args, full.dout));
      for (const [key, err] of Object.entries(e)) assert.ok(err > 4 * TIGHT, `${JSON.stringify(c)}: ${key} moved only ${err}`);
    }
  });

  it("portable path (rounded copies, float32 GEMM), 1 and 2 threads", { skip }, () => {
    const cpu = cpuBackend()!;
    assert.ok(cpu.setBf16GemmPath("portable"));
    try {
      forEachThreadCount((t) => checkAgainstReference(`portable, ${t} thread(s)`));
    } finally {
      cpu.setBf16GemmPath("auto");
    }
  });

  const cpu = skip ? null : cpuBackend();
  const avx = cpu ? cpu.setBf16GemmPath("avx512bf16") : false;
  cpu?.setBf16GemmPath("auto");
  it("avx512bf16 path (vdpbf16ps), 1 and 2 threads", { skip: skip || (avx ? false : "this CPU has no AVX512_BF16: the vdpbf16ps path cannot run here") }, () => {
    assert.ok(cpu!.setBf16GemmPath("avx512bf16"));
    try {
      forEachThreadCount((t) => checkAgainstReference(`avx512bf16, ${t} thread(s)`));
    } finally {
      cpu!.setBf16GemmPath("auto");
    }
  });

  const amx = cpu ? cpu.setBf16GemmPath("amx") : false;
  cpu?.setBf16GemmPath("auto");
  it("amx path (tdpbf16ps tiles), 1 and 2 threads", { skip: skip || (amx ? false : "this CPU or OS has no AMX-BF16 tiles: the amx path cannot run here") }, () => {
    assert.ok(cpu!.setBf16GemmPath("amx"));
    try {
      forEachThreadCount((t) => checkAgainstReference(`amx, ${t} thread(s)`));
    } finally {
      cpu!.setBf16GemmPath("auto");
    }
  });

  it("refuses lowPrecision with float64 operands", { skip }, () => {
    const { args } = build(CASES[0], true, new Rng(1));
    const to64 = (v: AttentionArgs["q"]) => ({ ...v, data: Float64Array.from(v.data as Float32Array) });
    const a64: AttentionArgs = { ...args, q: to64(args.q), k: to64(args.k), v: to64(args.v) };
    const heads = a64.n * a64.h;
    assert.throws(() => cpuBackend()!.attention(a64, new Float64Array(heads * a64.l * a64.dv), new Float64Array(heads * a64.l)), /lowPrecision needs float32/);
  });
});
