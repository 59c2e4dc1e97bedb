import type { AttentionArgs, Backend, TypedArray } from "../backend.js";
import { referenceBackend } from "../reference/index.js";
import { checkRun, checkView, isFloatArray, sameType } from "./checks.js";
import type { FloatArray } from "./native.js";

/** The native functions of native/kernels/napi_attention.cc, argument for argument. */
export interface NativeAttentionKernels {
  /** params: see packParams. */
  attentionForward(q: FloatArray, k: FloatArray, v: FloatArray, bias: FloatArray | null, out: FloatArray, lse: FloatArray, params: Float64Array): void;
  attentionBackward(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    bias: FloatArray | null,
    out: FloatArray,
    dout: FloatArray,
    lse: FloatArray,
    dq: FloatArray,
    dk: FloatArray,
    dv: FloatArray,
    params: Float64Array,
  ): void;
}

type AttentionMethods = Pick<Backend, "attention" | "attentionBackward">;

const params = new Float64Array(29);

/**
 * Checks that every element the kernel addresses lies inside its array (O(1)), then packs
 * [n, h, l, s, d, dv, q (offset, 3 strides), k (…), v (…), bias (offset, 4 strides), causal, scale,
 * dropoutP, seedLo, seedHi, lowPrecision] as napi_attention.cc reads them.
 */
function packParams(op: string, a: AttentionArgs): Float64Array {
  for (const v of [a.n, a.h, a.l, a.s, a.d, a.dv]) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`cpu backend ${op}: sizes must be positive integers, got n ${a.n}, h ${a.h}, l ${a.l}, s ${a.s}, d ${a.d}, dv ${a.dv}.`);
  }
  const operand = (name: string, view: AttentionArgs["q"], rows: number, cols: number) => {
    if (view.strides.length !== 3) throw new RangeError(`cpu backend ${op}: ${name} needs 3 strides ([n, h, row]), got ${view.strides.length}.`);
    checkView(op, name, { data: view.data, offset: view.offset, strides: [...view.strides, 1] }, [a.n, a.h, rows, cols]);
  };
  operand("q", a.q, a.l, a.d);
  operand("k", a.k, a.s, a.d);
  operand("v", a.v, a.s, a.dv);
  if (a.bias) {
    if (a.bias.strides.length !== 4) throw new RangeError(`cpu backend ${op}: bias needs 4 strides ([n, h, i, j]), got ${a.bias.strides.length}.`);
    checkView(op, "bias", a.bias, [a.n, a.h, a.l, a.s]);
  }
  if (a.lowPrecision && !(a.q.data instanceof Float32Array)) throw new TypeError(`cpu backend ${op}: lowPrecision needs float32 operands, got ${a.q.data.constructor.name}.`);
  const b = a.bias;
  params.set([a.n, a.h, a.l, a.s, a.d, a.dv]);
  params.set([a.q.offset, ...a.q.strides, a.k.offset, ...a.k.strides, a.v.offset, ...a.v.strides], 6);
  params.set(b ? [b.offset, ...b.strides] : [0, 0, 0, 0, 0], 18);
  params.set([a.causal ? 1 : 0, a.scale, a.dropoutP, a.seedLo >>> 0, a.seedHi >>> 0, a.lowPrecision ? 1 : 0], 23);
  return params;
}

function floats(a: AttentionArgs, ...more: TypedArray[]): boolean {
  return [a.q.data, a.k.data, a.v.data, ...(a.bias ? [a.bias.data] : []), ...more].every(isFloatArray);
}

/** The cpu backend's fused attention; anything but float32/float64 goes to the reference. */
export function attentionMethods(native: NativeAttentionKernels): AttentionMethods {
  return {
    attention(a, out, lse): void {
      if (!floats(a, out, lse)) return referenceBackend.attention(a, out, lse);
      const p = packParams("attention", a);
      checkRun("attention", "out", out, 0, a.n * a.h * a.l * a.dv);
      checkRun("attention", "lse", lse, 0, a.n * a.h * a.l);
      sameType("attention", a.q.data, a.k.data, a.v.data, a.bias?.data ?? null, out, lse);
      native.attentionForward(a.q.data as FloatArray, a.k.data as FloatArray, a.v.data as FloatArray, (a.bias?.data ?? null) as FloatArray | null, out as FloatArray, lse as FloatArray, p);
    },

    attentionBackward(a, out, dout, lse, dq, dk, dv): void {
      if (!floats(a, out, dout, lse, dq, dk, dv)) return referenceBackend.attentionBackward(a, out, dout, lse, dq, dk, dv);
      const p = packParams("attentionBackward", a);
      const rowsOut = a.n * a.h * a.l;
      checkRun("attentionBackward", "out", out, 0, rowsOut * a.dv);
      checkRun("attentionBackward", "dout", dout, 0, rowsOut * a.dv);
      checkRun("attentionBackward", "lse", lse, 0, rowsOut);
      checkRun("attentionBackward", "dq", dq, 0, rowsOut * a.d);
      checkRun("attentionBackward", "dk", dk, 0, a.n * a.h * a.s * a.d);
      checkRun("attentionBackward", "dv", dv, 0, a.n * a.h * a.s * a.dv);
      sameType("attentionBackward", a.q.data, a.k.data, a.v.data, a.bias?.data ?? null, out, dout, lse, dq, dk, dv);
      const f = (x: TypedArray) => x as FloatArray;
      native.attentionBackward(f(a.q.data), f(a.k.data), f(a.v.data), (a.bias?.data ?? null) as FloatArray | null, f(out), f(dout), f(lse), f(dq), f(dk), f(dv), p);
    },
  };
}
