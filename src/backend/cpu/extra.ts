import type { Backend, MathOp, ScatterOp, TypedArray } from "../backend.js";
import { referenceBackend } from "../reference/index.js";
import { checkRun, isFloatArray, sameType } from "./checks.js";
import type { FloatArray } from "./native.js";

/** The native functions of native/kernels/napi_extra.cc, argument for argument. */
export interface NativeExtraKernels {
  unaryMath(op: number, x: FloatArray, xOffset: number, out: FloatArray, n: number): void;
  atan2(a: FloatArray, aOffset: number, b: FloatArray, bOffset: number, out: FloatArray, n: number): void;
  sort(x: TypedArray, xOffset: number, outer: number, size: number, inner: number, descending: boolean, values: TypedArray, indices: Int32Array): void;
  cumulative(prod: boolean, x: TypedArray, xOffset: number, outer: number, size: number, inner: number, out: TypedArray): void;
  scatterReduce(op: number, src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;
}

// The op codes of napi_extra.cc's MathOp and ScatterOp enums: the same names in the same order.
const MATH_OPS: Record<MathOp, number> = {
  sin: 0, cos: 1, tan: 2, asin: 3, acos: 4, atan: 5, sinh: 6, cosh: 7, asinh: 8, acosh: 9, atanh: 10, log1p: 11, expm1: 12,
};
const SCATTER_OPS: Record<ScatterOp, number> = { assign: 0, sum: 1, prod: 2, amax: 3, amin: 4 };

type ExtraMethods = Pick<Backend, "unaryMath" | "atan2" | "sort" | "cumulative" | "scatterReduce">;

/** float32, float64 or int32: the dtypes the native sort, scan and scatter compute in. */
function numeric(a: TypedArray): boolean {
  return isFloatArray(a) || a instanceof Int32Array;
}

function opCode<K extends string>(table: Record<K, number>, op: K, where: string): number {
  const code = table[op];
  if (code === undefined) throw new RangeError(`cpu backend ${where}: unknown op ${String(op)}.`);
  return code;
}

/** The cpu backend's methods for the kernels in napi_extra.cc; bounds checked here, O(1). */
export function extraMethods(native: NativeExtraKernels): ExtraMethods {
  return {
    unaryMath(op, x, xOffset, out, n): void {
      checkRun("unaryMath", "x", x, xOffset, n);
      checkRun("unaryMath", "out", out, 0, n);
      if (n === 0) return;
      if (!isFloatArray(x) || !isFloatArray(out)) return referenceBackend.unaryMath(op, x, xOffset, out, n);
      sameType("unaryMath", x, out);
      native.unaryMath(opCode(MATH_OPS, op, "unaryMath"), x, xOffset, out, n);
    },

    atan2(a, aOffset, b, bOffset, out, n): void {
      checkRun("atan2", "a", a, aOffset, n);
      checkRun("atan2", "b", b, bOffset, n);
      checkRun("atan2", "out", out, 0, n);
      if (n === 0) return;
      if (!isFloatArray(a) || !isFloatArray(b) || !isFloatArray(out)) return referenceBackend.atan2(a, aOffset, b, bOffset, out, n);
      sameType("atan2", a, b, out);
      native.atan2(a, aOffset, b as FloatArray, bOffset, out as FloatArray, n);
    },

    sort(x, xOffset, outer, size, inner, descending, values, indices): void {
      const n = outer * size * inner;
      checkRun("sort", "x", x, xOffset, n);
      checkRun("sort", "values", values, 0, n);
      checkRun("sort", "indices", indices, 0, n);
      if (n === 0) return;
      if (!numeric(x)) return referenceBackend.sort(x, xOffset, outer, size, inner, descending, values, indices);
      sameType("sort", x, values);
      native.sort(x, xOffset, outer, size, inner, descending, values, indices);
    },

    cumulative(prod, x, xOffset, outer, size, inner, out): void {
      const n = outer * size * inner;
      checkRun("cumulative", "x", x, xOffset, n);
      checkRun("cumulative", "out", out, 0, n);
      if (n === 0) return;
      if (!numeric(x)) return referenceBackend.cumulative(prod, x, xOffset, outer, size, inner, out);
      sameType("cumulative", x, out);
      native.cumulative(prod, x, xOffset, outer, size, inner, out);
    },

    scatterReduce(op, src, outer, size, inner, index, k, out): void {
      checkRun("scatterReduce", "src", src, 0, outer * k * inner);
      checkRun("scatterReduce", "index", index, 0, outer * k * inner);
      checkRun("scatterReduce", "out", out, 0, outer * size * inner);
      if (outer * k * inner === 0) return;
      // Indices are checked in ops/, but the native loop writes through them: check again, O(n).
      for (let i = 0; i < outer * k * inner; i++) {
        if (!(index[i] >= 0 && index[i] < size)) throw new RangeError(`cpu backend scatterReduce: index ${index[i]} at ${i} is outside [0, ${size}).`);
      }
      if (!numeric(src)) return referenceBackend.scatterReduce(op, src, outer, size, inner, index, k, out);
      sameType("scatterReduce", src, out);
      native.scatterReduce(opCode(SCATTER_OPS, op, "scatterReduce"), src, outer, size, inner, index, k, out);
    },
  };
}
