import type { AttentionArgs, TypedArray } from "../backend.js";
import { bf16ToFloat, floatToBf16 } from "./convert.js";

const MASK64 = (1n << 64n) - 1n;

/**
 * The dropout keep-test of the fused attention (splitmix64 of seed + (index + 1)·φ, top 24 bits as a
 * uniform in [0, 1)), bit for bit the native AttnKeep: forward and backward recompute the same mask.
 */
export function attentionKeep(seed: bigint, index: number, p: number): boolean {
  let z = (seed + (BigInt(index) + 1n) * 0x9e3779b97f4a7c15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  z ^= z >> 31n;
  return Number(z >> 40n) / 16777216 >= p;
}

const roundBf16 = (x: number) => bf16ToFloat(floatToBf16(x));
const exact = (x: number) => x;

/**
 * What a product operand becomes: rounded to bfloat16 under lowPrecision (float32 only, as the
 * native kernel, whose products all run on the bfloat16 GEMM), else itself.
 */
function operandRounding(a: AttentionArgs): (x: number) => number {
  if (!a.lowPrecision) return exact;
  if (!(a.q.data instanceof Float32Array)) throw new TypeError(`attention: lowPrecision needs float32 operands, got ${a.q.data.constructor.name}`);
  return roundBf16;
}

/** The row of probabilities P[i, ·] (softmax of the masked, scaled scores) and the dropout factors. */
function rowOf(a: AttentionArgs, n: number, h: number, i: number, seed: bigint): { p: Float64Array; z: Float64Array; max: number; sum: number } {
  const [qn, qh, qr] = a.q.strides;
  const [kn, kh, kr] = a.k.strides;
  const r = operandRounding(a);
  const scores = new Float64Array(a.s);
  for (let j = 0; j < a.s; j++) {
    let dot = 0;
    const qo = a.q.offset + n * qn + h * qh + i * qr;
    const ko = a.k.offset + n * kn + h * kh + j * kr;
    for (let c = 0; c < a.d; c++) dot += r(Number(a.q.data[qo + c])) * r(Number(a.k.data[ko + c]));
    let s = dot * a.scale;
    if (a.bias) {
      const [bn, bh, bi, bj] = a.bias.strides;
      s += Number(a.bias.data[a.bias.offset + n * bn + h * bh + i * bi + j * bj]);
    }
    if (a.causal && j > i) s = Number.NEGATIVE_INFINITY;
    scores[j] = s;
  }
  let max = Number.NEGATIVE_INFINITY;
  for (const s of scores) max = Math.max(max, s);
  let sum = 0;
  const p = new Float64Array(a.s);
  for (let j = 0; j < a.s; j++) {
    p[j] = Math.exp(scores[j] - max);
    sum += p[j];
  }
  for (let j = 0; j < a.s; j++) p[j] /= sum;
  const z = new Float64Array(a.s).fill(1);
  if (a.dropoutP > 0) {
    const b = n * a.h + h;
    for (let j = 0; j < a.s; j++) z[j] = attentionKeep(seed, (b * a.l + i) * a.s + j, a.dropoutP) ? 1 / (1 - a.dropoutP) : 0;
  }
  return { p, z, max, sum };
}

function seedOf(a: AttentionArgs): bigint {
  return (BigInt(a.seedHi >>> 0) << 32n) | BigInt(a.seedLo >>> 0);
}

function vAt(a: AttentionArgs, n: number, h: number, j: number): number {
  const [vn, vh, vr] = a.v.strides;
  return a.v.offset + n * vn + h * vh + j * vr;
}

/**
 * One row at a time with the whole score row in memory: obviously correct, O(s) per row. Under
 * lowPrecision the probabilities enter the product with v as bfloat16(exp(score − row max) · dropout
 * factor), divided by their sum afterwards, as the kernel does (it subtracts the running max of its
 * 128-key tiles: the same for up to 128 keys).
 */
export function attention(a: AttentionArgs, out: TypedArray, lse: TypedArray): void {
  const seed = seedOf(a);
  const r = operandRounding(a);
  for (let n = 0; n < a.n; n++) {
    for (let h = 0; h < a.h; h++) {
      for (let i = 0; i < a.l; i++) {
        const { p, z, max, sum } = rowOf(a, n, h, i, seed);
        const row = ((n * a.h + h) * a.l + i) * a.dv;
        for (let c = 0; c < a.dv; c++) {
          let acc = 0;
          for (let j = 0; j < a.s; j++) acc += r(p[j] * sum * z[j]) * r(Number(a.v.data[vAt(a, n, h, j) + c]));
          out[row + c] = acc / sum;
        }
        lse[(n * a.h + h) * a.l + i] = max + Math.log(sum);
      }
    }
  }
}

/** Under lowPrecision every product rounds its operands (dout, v, q, k, P∘Z and dS before the scale) to bfloat16. */
export function attentionBackward(a: AttentionArgs, out: TypedArray, dout: TypedArray, _lse: TypedArray, dq: TypedArray, dk: TypedArray, dv: TypedArray): void {
  const seed = seedOf(a);
  const r = operandRounding(a);
  const [qn, qh, qr] = a.q.strides;
  const [kn, kh, kr] = a.k.strides;
  const gq = new Float64Array(a.n * a.h * a.l * a.d);
  const gk = new Float64Array(a.n * a.h * a.s * a.d);
  const gv = new Float64Array(a.n * a.h * a.s * a.dv);
  for (let n = 0; n < a.n; n++) {
    for (let h = 0; h < a.h; h++) {
      const b = n * a.h + h;
      for (let i = 0; i < a.l; i++) {
        const { p, z } = rowOf(a, n, h, i, seed);
        const orow = (b * a.l + i) * a.dv;
        let delta = 0;
        for (let c = 0; c < a.dv; c++) delta += Number(dout[orow + c]) * Number(out[orow + c]);
        const qo = a.q.offset + n * qn + h * qh + i * qr;
        for (let j = 0; j < a.s; j++) {
          const vo = vAt(a, n, h, j);
          let dp = 0;
          for (let c = 0; c < a.dv; c++) {
            dp += r(Number(dout[orow + c])) * r(Number(a.v.data[vo + c]));
            gv[(b * a.s + j) * a.dv + c] += r(p[j] * z[j]) * r(Number(dout[orow + c]));
          }
          const ds = r(p[j] * (dp * z[j] - delta)) * a.scale;
          const ko = a.k.offset + n * kn + h * kh + j * kr;
          for (let c = 0; c < a.d; c++) {
            gq[(b * a.l + i) * a.d + c] += ds * r(Number(a.k.data[ko + c]));
            gk[(b * a.s + j) * a.d + c] += ds * r(Number(a.q.data[qo + c]));
          }
        }
      }
    }
  }
  dq.set(gq);
  dk.set(gk);
  dv.set(gv);
}
