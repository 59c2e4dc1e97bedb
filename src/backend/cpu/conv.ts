import type { AvgPoolWindows, Backend, ConvGeometry, MaxPoolGeometry, TypedArray } from "../backend.js";
import { referenceBackend } from "../reference/index.js";
import { checkRun, isFloatArray, sameType } from "./checks.js";
import type { FloatArray } from "./native.js";

/** The native functions of native/kernels/napi_conv.cc, argument for argument. */
export interface NativeConvKernels {
  /** geometry: ConvGeometry's fields in conv.h's order (see packConv). */
  conv2d(x: FloatArray, w: FloatArray, bias: FloatArray | null, out: FloatArray, geometry: Float64Array): void;
  conv2dBackwardInput(grad: FloatArray, w: FloatArray, gradX: FloatArray, geometry: Float64Array): void;
  conv2dBackwardWeight(grad: FloatArray, x: FloatArray, gradW: FloatArray | null, gradBias: FloatArray | null, geometry: Float64Array): void;
  /** geometry: [planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw] */
  maxPool2d(x: FloatArray, out: FloatArray, indices: Int32Array, geometry: Float64Array): void;
  /** sizes: [planes, h, w, oh, ow] */
  avgPool2d(backward: boolean, src: FloatArray, dst: FloatArray, hStart: Int32Array, hEnd: Int32Array, wStart: Int32Array, wEnd: Int32Array, divisors: Float64Array, sizes: Float64Array): void;
  channelSums(a: FloatArray, b: FloatArray | null, n: number, c: number, l: number, sumA: Float64Array, sumAB: Float64Array): void;
  channelAffine(a: FloatArray, b: FloatArray | null, n: number, c: number, l: number, sa: Float64Array, sb: Float64Array | null, shift: Float64Array, out: FloatArray): void;
}

type ConvMethods = Pick<Backend, "conv2d" | "conv2dBackwardInput" | "conv2dBackwardWeight" | "maxPool2d" | "avgPool2d" | "avgPool2dBackward" | "channelSums" | "channelAffine">;

const convPacked = new Float64Array(16);
const poolPacked = new Float64Array(13);
const sizesPacked = new Float64Array(5);

function packConv(g: ConvGeometry): Float64Array {
  const f = [g.batch, g.inChannels, g.height, g.width, g.outChannels, g.outHeight, g.outWidth, g.kernelH, g.kernelW, g.strideH, g.strideW, g.padH, g.padW, g.dilationH, g.dilationW, g.groups];
  for (let i = 0; i < f.length; i++) {
    if (!Number.isSafeInteger(f[i])) throw new RangeError(`cpu backend conv2d: the geometry needs integers, got ${JSON.stringify(g)}.`);
    convPacked[i] = f[i];
  }
  return convPacked;
}

/** The sizes the native loops trust: every array long enough for the geometry. O(1). */
function checkConv(op: string, g: ConvGeometry, x: TypedArray, w: TypedArray, out: TypedArray): void {
  const positive = [g.strideH, g.strideW, g.dilationH, g.dilationW, g.groups, g.kernelH, g.kernelW];
  if (positive.some((v) => v < 1) || g.inChannels % g.groups !== 0 || g.outChannels % g.groups !== 0 || g.padH < 0 || g.padW < 0) {
    throw new RangeError(`cpu backend ${op}: bad geometry ${JSON.stringify(g)}.`);
  }
  // Positions outside the input read as zero in the native loops, so any output size stays in bounds.
  checkRun(op, "x", x, 0, g.batch * g.inChannels * g.height * g.width);
  checkRun(op, "weight", w, 0, g.outChannels * (g.inChannels / g.groups) * g.kernelH * g.kernelW);
  checkRun(op, "out", out, 0, g.batch * g.outChannels * g.outHeight * g.outWidth);
}

function checkWindows(op: string, w: AvgPoolWindows, x: TypedArray, out: TypedArray): void {
  checkRun(op, "x", x, 0, w.planes * w.height * w.width);
  checkRun(op, "out", out, 0, w.planes * w.outHeight * w.outWidth);
  checkRun(op, "divisors", w.divisors, 0, w.outHeight * w.outWidth);
  for (const [name, arr, n, limit] of [["hStart", w.hStart, w.outHeight, w.height], ["hEnd", w.hEnd, w.outHeight, w.height], ["wStart", w.wStart, w.outWidth, w.width], ["wEnd", w.wEnd, w.outWidth, w.width]] as const) {
    checkRun(op, name, arr, 0, n);
    for (let i = 0; i < n; i++) if (arr[i] < 0 || arr[i] > limit) throw new RangeError(`cpu backend ${op}: ${name}[${i}] = ${arr[i]} is outside [0, ${limit}].`);
  }
}

/** The cpu backend's methods for the kernels in napi_conv.cc; bounds checked here. */
export function convMethods(native: NativeConvKernels): ConvMethods {
  const floats = (...arrays: (TypedArray | null)[]) => arrays.every((a) => a === null || isFloatArray(a));
  return {
    conv2d(g, x, w, bias, out): void {
      checkConv("conv2d", g, x, w, out);
      if (bias) checkRun("conv2d", "bias", bias, 0, g.outChannels);
      if (!floats(x, w, bias, out)) return referenceBackend.conv2d(g, x, w, bias, out);
      sameType("conv2d", x, w, bias, out);
      native.conv2d(x as FloatArray, w as FloatArray, bias as FloatArray | null, out as FloatArray, packConv(g));
    },

    conv2dBackwardInput(g, grad, w, gradX): void {
      checkConv("conv2dBackwardInput", g, gradX, w, grad);
      if (!floats(grad, w, gradX)) return referenceBackend.conv2dBackwardInput(g, grad, w, gradX);
      sameType("conv2dBackwardInput", grad, w, gradX);
      native.conv2dBackwardInput(grad as FloatArray, w as FloatArray, gradX as FloatArray, packConv(g));
    },

    conv2dBackwardWeight(g, grad, x, gradW, gradBias): void {
      if (gradW) checkConv("conv2dBackwardWeight", g, x, gradW, grad);
      else checkRun("conv2dBackwardWeight", "grad", grad, 0, g.batch * g.outChannels * g.outHeight * g.outWidth);
      if (gradBias) checkRun("conv2dBackwardWeight", "gradBias", gradBias, 0, g.outChannels);
      if (!floats(grad, x, gradW, gradBias)) return referenceBackend.conv2dBackwardWeight(g, grad, x, gradW, gradBias);
      sameType("conv2dBackwardWeight", grad, x, gradW, gradBias);
      native.conv2dBackwardWeight(grad as FloatArray, x as FloatArray, gradW as FloatArray | null, gradBias as FloatArray | null, packConv(g));
    },

    maxPool2d(g: MaxPoolGeometry, x, out, indices): void {
      const f = [g.planes, g.height, g.width, g.outHeight, g.outWidth, g.kernelH, g.kernelW, g.strideH, g.strideW, g.padH, g.padW, g.dilationH, g.dilationW];
      if (f.some((v) => !Number.isSafeInteger(v) || v < 0) || [g.kernelH, g.kernelW, g.strideH, g.strideW, g.dilationH, g.dilationW].some((v) => v < 1)) {
        throw new RangeError(`cpu backend maxPool2d: bad geometry ${JSON.stringify(g)}.`);
      }
      // Every window must start inside its plane: the pad is at most half the kernel (ops checks).
      if (g.padH * 2 > g.kernelH || g.padW * 2 > g.kernelW) throw new RangeError(`cpu backend maxPool2d: the padding exceeds half the kernel.`);
      if ((g.outHeight - 1) * g.strideH - g.padH >= g.height || (g.outWidth - 1) * g.strideW - g.padW >= g.width) {
        if (g.outHeight > 0 && g.outWidth > 0) throw new RangeError(`cpu backend maxPool2d: the last window starts outside the input.`);
      }
      checkRun("maxPool2d", "x", x, 0, g.planes * g.height * g.width);
      const n = g.planes * g.outHeight * g.outWidth;
      checkRun("maxPool2d", "out", out, 0, n);
      checkRun("maxPool2d", "indices", indices, 0, n);
      if (n === 0) return;
      if (!floats(x, out)) return referenceBackend.maxPool2d(g, x, out, indices);
      sameType("maxPool2d", x, out);
      f.forEach((v, i) => (poolPacked[i] = v));
      native.maxPool2d(x as FloatArray, out as FloatArray, indices, poolPacked);
    },

    avgPool2d(w, x, out): void {
      checkWindows("avgPool2d", w, x, out);
      if (!floats(x, out)) return referenceBackend.avgPool2d(w, x, out);
      sameType("avgPool2d", x, out);
      sizesPacked.set([w.planes, w.height, w.width, w.outHeight, w.outWidth]);
      native.avgPool2d(false, x as FloatArray, out as FloatArray, w.hStart, w.hEnd, w.wStart, w.wEnd, w.divisors, sizesPacked);
    },

    avgPool2dBackward(w, grad, gradX): void {
      checkWindows("avgPool2dBackward", w, gradX, grad);
      if (!floats(grad, gradX)) return referenceBackend.avgPool2dBackward(w, grad, gradX);
      sameType("avgPool2dBackward", grad, gradX);
      sizesPacked.set([w.planes, w.height, w.width, w.outHeight, w.outWidth]);
      native.avgPool2d(true, grad as FloatArray, gradX as FloatArray, w.hStart, w.hEnd, w.wStart, w.wEnd, w.divisors, sizesPacked);
    },

    channelSums(a, b, n, c, l, sumA, sumAB): void {
      checkRun("channelSums", "a", a, 0, n * c * l);
      if (b) checkRun("channelSums", "b", b, 0, n * c * l);
      checkRun("channelSums", "sumA", sumA, 0, c);
      checkRun("channelSums", "sumAB", sumAB, 0, c);
      if (!floats(a, b)) return referenceBackend.channelSums(a, b, n, c, l, sumA, sumAB);
      sameType("channelSums", a, b);
      native.channelSums(a as FloatArray, b as FloatArray | null, n, c, l, sumA, sumAB);
    },

    channelAffine(a, b, n, c, l, sa, sb, shift, out): void {
      for (const [name, arr, len] of [["a", a, n * c * l], ["b", b, n * c * l], ["sa", sa, c], ["sb", sb, c], ["shift", shift, c], ["out", out, n * c * l]] as const) {
        if (arr) checkRun("channelAffine", name, arr, 0, len);
      }
      if ((b === null) !== (sb === null)) throw new RangeError("cpu backend channelAffine: b and sb come together.");
      if (!floats(a, b, out)) return referenceBackend.channelAffine(a, b, n, c, l, sa, sb, shift, out);
      sameType("channelAffine", a, b, out);
      native.channelAffine(a as FloatArray, b as FloatArray | null, n, c, l, sa, sb, shift, out as FloatArray);
    },
  };
}
