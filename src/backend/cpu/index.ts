import type { AdamArgs, Backend, MatmulArgs, ReduceOp, SgdArgs, StridedView, TypedArray } from "../backend.js";
import { referenceBackend } from "../reference/index.js";
import { checkMatmul, checkRun, checkView, isFloatArray, numelOf, sameType } from "./checks.js";
import { convMethods, type NativeConvKernels } from "./conv.js";
import { attentionMethods, type NativeAttentionKernels } from "./attention.js";
import { extraMethods, type NativeExtraKernels } from "./extra.js";
import { encodeFill } from "./fill.js";
import { applyBf16GemmPathFromEnv, applyIsaFromEnv } from "./isa.js";
import { packLayout } from "./layout.js";
import type { FloatArray, NativeAddon, NativeKernels } from "./native.js";
import { BINARY, REDUCE, UNARY, UNARY_GRAD } from "./opcodes.js";
import { defaultNumThreads, parseThreadCount } from "./threads.js";
import { installArena, setFreshMemoryReporter } from "../../tensor/storage.js";
import { installMappedFiles, type NativeMapped } from "../../tensor/mapped.js";

export type { NativeAddon, NativeKernels } from "./native.js";
export { defaultNumThreads } from "./threads.js";

/** The `cpu` backend, with the controls of its native thread pool and instruction set. */
export interface CpuBackend extends Backend {
  setNumThreads(n: number): void;
  getNumThreads(): number;
  /** The instruction set the kernels run on ("avx512", "avx2" or "portable"). */
  isa(): string;
  /** Forces an instruction set (tests); false if this CPU cannot run it. "auto" picks the best. */
  setIsa(name: string): boolean;
  /** The bfloat16 GEMM's path: "amx" (tdpbf16ps tiles), "avx512bf16" (vdpbf16ps) or "portable" (exact conversion to float32). */
  bf16GemmPath(): string;
  /** Forces the bfloat16 GEMM's path (tests): "auto", "amx", "avx512bf16" or "portable"; false if this CPU cannot run it. */
  setBf16GemmPath(name: string): boolean;
}

const matmulParams = new Float64Array(15);

/** matmul's sizes, offsets, strides and scalars in the order native/kernels/napi_math.cc reads them. */
function packMatmulParams(args: MatmulArgs): Float64Array {
  const p = matmulParams;
  p[0] = args.batch, p[1] = args.m, p[2] = args.n, p[3] = args.k;
  p[4] = args.aOffset, p[5] = args.aRowStride, p[6] = args.aColStride, p[7] = args.aBatchStride;
  p[8] = args.bOffset, p[9] = args.bRowStride, p[10] = args.bColStride, p[11] = args.bBatchStride;
  p[12] = args.outOffset, p[13] = args.alpha, p[14] = args.beta;
  return p;
}
const adamParams = new Float64Array(9);
const sgdParams = new Float64Array(8);

/**
 * The Backend on the native addon. Each method checks, in O(ndim), that the native call stays inside
 * the arrays it is given, then makes one N-API call. Dtypes the kernels don't compute in (int32 and
 * bool arithmetic, bfloat16 sums) go to the reference backend, which defines the semantics anyway.
 */
export function createCpuBackend(addon: NativeAddon): CpuBackend {
  const native: NativeKernels = addon;
  applyIsaFromEnv(native);
  applyBf16GemmPathFromEnv(native);
  native.setNumThreads(defaultNumThreads());
  // Tensor memory from the native arena, which recycles what the collector finds dead; an addon
  // built before the arena existed falls back to reporting fresh SharedArrayBuffers to V8.
  if (!(typeof native.arenaAlloc === "function" && installArena(native))) setFreshMemoryReporter((bytes) => native.adjustExternalMemory(bytes));
  installMappedFiles(addon as unknown as Partial<NativeMapped>);

  const binaryFlat = native.binaryFlat?.bind(native);

  return {
    name: "cpu",

    setNumThreads(n: number): void {
      native.setNumThreads(parseThreadCount(n, "setNumThreads"));
    },
    getNumThreads: () => native.getNumThreads(),
    isa: () => native.getIsa(),
    setIsa: (name: string) => native.setIsa(name),
    bf16GemmPath: () => native.bf16GemmPath(),
    setBf16GemmPath: (name: string) => native.bf16GemmPath(name),

    fill(out: TypedArray, outOffset: number, n: number, value: number): void {
      checkRun("fill", "out", out, outOffset, n);
      out.fill(encodeFill(out, value), outOffset, outOffset + n);
    },

    copy(src: StridedView, shape: readonly number[], out: TypedArray, outOffset: number): void {
      const n = numelOf(shape);
      checkRun("copy", "out", out, outOffset, n);
      if (n === 0) return;
      checkView("copy", "src", src, shape);
      native.copy(src.data, out, packLayout(shape, [src], [outOffset]));
    },

    unary(op, x, xOffset, out, n, p0 = 0, p1 = 0): void {
      checkRun("unary", "x", x, xOffset, n);
      checkRun("unary", "out", out, 0, n);
      if (n === 0) return;
      if (!isFloatArray(x) || !isFloatArray(out)) return referenceBackend.unary(op, x, xOffset, out, n, p0, p1);
      if (x.constructor !== out.constructor) sameType("unary", x, out);
      native.unary(UNARY[op], x, xOffset, out, n, p0, p1);
    },

    unaryGrad(op, grad, saved, savedOffset, out, n, p0 = 0, p1 = 0): void {
      checkRun("unaryGrad", "grad", grad, 0, n);
      checkRun("unaryGrad", "saved", saved, savedOffset, n);
      checkRun("unaryGrad", "out", out, 0, n);
      if (n === 0) return;
      if (!isFloatArray(grad) || !isFloatArray(saved) || !isFloatArray(out)) {
        return referenceBackend.unaryGrad(op, grad, saved, savedOffset, out, n, p0, p1);
      }
      sameType("unaryGrad", grad, saved, out);
      native.unaryGrad(UNARY_GRAD[op], grad, saved, savedOffset, out, n, p0, p1);
    },

    binary(op, a, b, shape, out): void {
      // One dense run of each operand (what same-shape elementwise ops pass): bounds are three runs
      // and nothing is packed, which is most of a small op's cost.
      if (shape.length === 1 && a.strides.length === 1 && b.strides.length === 1 && a.strides[0] === 1 && b.strides[0] === 1 && binaryFlat) {
        const n = shape[0];
        const code = BINARY[op];
        if (n > 0 && isFloatArray(a.data) && a.data.constructor === b.data.constructor && (code >= BINARY.eq ? out instanceof Uint8Array : out.constructor === a.data.constructor)) {
          checkRun("binary", "out", out, 0, n);
          checkRun("binary", "a", a.data, a.offset, n);
          checkRun("binary", "b", b.data, b.offset, n);
          return binaryFlat(code, a.data, a.offset, b.data as typeof a.data, b.offset, out, n);
        }
      }
      const n = numelOf(shape);
      checkRun("binary", "out", out, 0, n);
      if (n === 0) return;
      checkView("binary", "a", a, shape);
      checkView("binary", "b", b, shape);
      if (!isFloatArray(a.data) || a.data.constructor !== b.data.constructor) return referenceBackend.binary(op, a, b, shape, out);
      const code = BINARY[op];
      if (code >= BINARY.eq ? !(out instanceof Uint8Array) : out.constructor !== a.data.constructor) {
        return referenceBackend.binary(op, a, b, shape, out);
      }
      native.binary(code, a.data, b.data as typeof a.data, out, packLayout(shape, [a, b]));
    },

    where(cond, a, b, shape, out): void {
      const n = numelOf(shape);
      checkRun("where", "out", out, 0, n);
      if (n === 0) return;
      checkView("where", "cond", cond, shape);
      checkView("where", "a", a, shape);
      checkView("where", "b", b, shape);
      if (!(cond.data instanceof Uint8Array)) throw new TypeError(`cpu backend where: cond must be bool (Uint8Array), got ${cond.data.constructor.name}.`);
      sameType("where", a.data, b.data, out);
      native.where(cond.data, a.data, b.data, out, packLayout(shape, [cond, a, b]));
    },

    reduce(op: ReduceOp, x, xOffset, outer, size, inner, out, indices): void {
      checkRun("reduce", "x", x, xOffset, outer * size * inner);
      checkRun("reduce", "out", out, 0, outer * inner);
      if (indices) checkRun("reduce", "indices", indices, 0, outer * inner);
      if (outer * inner === 0) return;
      if (!isFloatArray(x) || !isFloatArray(out)) return referenceBackend.reduce(op, x, xOffset, outer, size, inner, out, indices);
      if (x.constructor !== out.constructor) sameType("reduce", x, out);
      native.reduce(REDUCE[op], x, xOffset, outer, size, inner, out, indices);
    },

    matmul(args: MatmulArgs): void {
      checkMatmul(args);
      const { a, b, out } = args;
      if (args.batch * args.m * args.n === 0) return;
      if (!isFloatArray(a) || !isFloatArray(b) || !isFloatArray(out)) return referenceBackend.matmul(args);
      if (a.constructor !== b.constructor || a.constructor !== out.constructor) sameType("matmul", a, b, out);
      const p = packMatmulParams(args);
      native.matmul(a, b as typeof a, out as typeof a, p);
    },

    matmulBf16(args: MatmulArgs): void {
      checkMatmul(args);
      const { a, b, out } = args;
      const half = (x: TypedArray): x is Float32Array | Uint16Array => x instanceof Float32Array || x instanceof Uint16Array;
      if (!half(a) || !half(b) || !(out instanceof Float32Array)) {
        throw new TypeError(`matmulBf16: expected float32 or bfloat16 operands and a float32 output, got ${a.constructor.name}, ${b.constructor.name} and ${out.constructor.name}`);
      }
      if (args.batch * args.m * args.n === 0) return;
      const p = packMatmulParams(args);
      native.matmulBf16(a, b, out, p);
    },

    softmax(x, xOffset, rows, cols, log, out): void {
      checkRun("softmax", "x", x, xOffset, rows * cols);
      checkRun("softmax", "out", out, 0, rows * cols);
      if (rows * cols === 0) return;
      if (!isFloatArray(x) || !isFloatArray(out)) return referenceBackend.softmax(x, xOffset, rows, cols, log, out);
      if (x.constructor !== out.constructor) sameType("softmax", x, out);
      native.softmax(x, xOffset, rows, cols, log, out);
    },

    softmaxBackward(grad, y, rows, cols, log, out): void {
      for (const [name, arr] of [["grad", grad], ["y", y], ["out", out]] as const) checkRun("softmaxBackward", name, arr, 0, rows * cols);
      if (rows * cols === 0) return;
      if (!isFloatArray(grad) || !isFloatArray(y) || !isFloatArray(out)) return referenceBackend.softmaxBackward(grad, y, rows, cols, log, out);
      sameType("softmaxBackward", grad, y, out);
      native.softmaxBackward(grad, y, rows, cols, log, out);
    },

    crossEntropy(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, loss, stats): void {
      checkRun("crossEntropy", "x", x, xOffset, rows * cols);
      checkRun("crossEntropy", "target", target, targetOffset, rows);
      checkRun("crossEntropy", "loss", loss, 0, rows);
      checkRun("crossEntropy", "stats", stats, 0, 2 * rows);
      if (rows === 0) return;
      if (cols === 0 || !isFloatArray(x)) return referenceBackend.crossEntropy(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, loss, stats);
      sameType("crossEntropy", x, loss, stats);
      native.crossEntropy(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, loss as FloatArray, stats as FloatArray);
    },

    crossEntropyBackward(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, stats, scale, out): void {
      checkRun("crossEntropyBackward", "x", x, xOffset, rows * cols);
      checkRun("crossEntropyBackward", "target", target, targetOffset, rows);
      checkRun("crossEntropyBackward", "stats", stats, 0, 2 * rows);
      checkRun("crossEntropyBackward", "scale", scale, 0, rows);
      checkRun("crossEntropyBackward", "out", out, 0, rows * cols);
      if (rows * cols === 0) return;
      if (!isFloatArray(x)) return referenceBackend.crossEntropyBackward(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, stats, scale, out);
      sameType("crossEntropyBackward", x, stats, scale, out);
      native.crossEntropyBackward(x, xOffset, rows, cols, target, targetOffset, ignoreIndex, smoothing, stats as FloatArray, scale as FloatArray, out as FloatArray);
    },

    layerNorm(x, rows, cols, weight, bias, eps, out, mean, rstd): void {
      checkRun("layerNorm", "x", x, 0, rows * cols);
      checkRun("layerNorm", "out", out, 0, rows * cols);
      checkRun("layerNorm", "mean", mean, 0, rows);
      checkRun("layerNorm", "rstd", rstd, 0, rows);
      if (weight) checkRun("layerNorm", "weight", weight, 0, cols);
      if (bias) checkRun("layerNorm", "bias", bias, 0, cols);
      if (rows === 0) return;
      if (![x, out, mean, rstd, weight ?? x, bias ?? x].every(isFloatArray)) {
        return referenceBackend.layerNorm(x, rows, cols, weight, bias, eps, out, mean, rstd);
      }
      sameType("layerNorm", x, out, mean, rstd, weight, bias);
      native.layerNorm(x as Float32Array, rows, cols, weight as Float32Array | null, bias as Float32Array | null, eps, out as Float32Array, mean as Float32Array, rstd as Float32Array);
    },

    layerNormBackward(grad, x, rows, cols, weight, mean, rstd, gradX, gradWeight, gradBias): void {
      const op = "layerNormBackward";
      for (const [name, arr] of [["grad", grad], ["x", x], ["gradX", gradX]] as const) checkRun(op, name, arr, 0, rows * cols);
      checkRun(op, "mean", mean, 0, rows);
      checkRun(op, "rstd", rstd, 0, rows);
      for (const [name, arr] of [["weight", weight], ["gradWeight", gradWeight], ["gradBias", gradBias]] as const) {
        if (arr) checkRun(op, name, arr, 0, cols);
      }
      const all = [grad, x, mean, rstd, gradX, weight ?? x, gradWeight ?? x, gradBias ?? x];
      if (!all.every(isFloatArray)) return referenceBackend.layerNormBackward(grad, x, rows, cols, weight, mean, rstd, gradX, gradWeight, gradBias);
      sameType(op, ...all);
      if (rows === 0) {
        gradWeight?.fill(0, 0, cols);
        gradBias?.fill(0, 0, cols);
        return;
      }
      type F = Float32Array;
      native.layerNormBackward(grad as F, x as F, rows, cols, weight as F | null, mean as F, rstd as F, gradX as F, gradWeight as F | null, gradBias as F | null);
    },

    indexSelect(x, outer, size, inner, index, out): void {
      checkRun("indexSelect", "x", x, 0, outer * size * inner);
      checkRun("indexSelect", "out", out, 0, outer * index.length * inner);
      if (outer * index.length * inner === 0) return;
      sameType("indexSelect", x, out);
      native.indexSelect(x, outer, size, inner, index, out);
    },

    indexAdd(grad, outer, size, inner, index, out): void {
      checkRun("indexAdd", "grad", grad, 0, outer * index.length * inner);
      checkRun("indexAdd", "out", out, 0, outer * size * inner);
      if (outer * index.length * inner === 0) return;
      if (!addable(out)) return referenceBackend.indexAdd(grad, outer, size, inner, index, out);
      sameType("indexAdd", grad, out);
      native.indexAdd(grad, outer, size, inner, index, out);
    },

    gather(x, outer, size, inner, index, k, out): void {
      checkRun("gather", "x", x, 0, outer * size * inner);
      checkRun("gather", "index", index, 0, outer * k * inner);
      checkRun("gather", "out", out, 0, outer * k * inner);
      if (outer * k * inner === 0) return;
      sameType("gather", x, out);
      native.gather(x, outer, size, inner, index, k, out);
    },

    scatterAdd(src, outer, size, inner, index, k, out): void {
      checkRun("scatterAdd", "src", src, 0, outer * k * inner);
      checkRun("scatterAdd", "index", index, 0, outer * k * inner);
      checkRun("scatterAdd", "out", out, 0, outer * size * inner);
      if (outer * k * inner === 0) return;
      if (!addable(out)) return referenceBackend.scatterAdd(src, outer, size, inner, index, k, out);
      sameType("scatterAdd", src, out);
      native.scatterAdd(src, outer, size, inner, index, k, out);
    },

    triangle(x, batch, rows, cols, diagonal, upper, out): void {
      checkRun("triangle", "x", x, 0, batch * rows * cols);
      checkRun("triangle", "out", out, 0, batch * rows * cols);
      if (batch * rows * cols === 0) return;
      if (!Number.isSafeInteger(diagonal)) throw new RangeError(`cpu backend triangle: diagonal must be an integer, got ${diagonal}.`);
      sameType("triangle", x, out);
      native.triangle(x, batch, rows, cols, diagonal, upper, out);
    },

    adamStep(args: AdamArgs): void {
      const { n, param, grad, expAvg, expAvgSq, maxExpAvgSq } = args;
      for (const [name, arr] of [["param", param], ["grad", grad], ["expAvg", expAvg], ["expAvgSq", expAvgSq], ["maxExpAvgSq", maxExpAvgSq]] as const) {
        if (arr) checkRun("adamStep", name, arr, 0, n);
      }
      if (n === 0) return;
      sameType("adamStep", param, grad, expAvg, expAvgSq, maxExpAvgSq);
      const p = adamParams;
      p[0] = n, p[1] = args.lr, p[2] = args.beta1, p[3] = args.beta2, p[4] = args.eps, p[5] = args.weightDecay;
      p[6] = args.decoupled ? 1 : 0, p[7] = args.step, p[8] = args.maximize ? 1 : 0;
      native.adamStep(param, grad, expAvg, expAvgSq, maxExpAvgSq, p);
    },

    sgdStep(args: SgdArgs): void {
      const { n, param, grad, momentumBuffer } = args;
      checkRun("sgdStep", "param", param, 0, n);
      checkRun("sgdStep", "grad", grad, 0, n);
      if (momentumBuffer) checkRun("sgdStep", "momentumBuffer", momentumBuffer, 0, n);
      if (n === 0) return;
      sameType("sgdStep", param, grad, momentumBuffer);
      const p = sgdParams;
      p[0] = n, p[1] = args.lr, p[2] = args.momentum, p[3] = args.dampening, p[4] = args.nesterov ? 1 : 0;
      p[5] = args.weightDecay, p[6] = args.maximize ? 1 : 0, p[7] = args.firstStep ? 1 : 0;
      native.sgdStep(param, grad, momentum(args) ? momentumBuffer : null, p);
    },

    sumSquares(x, xOffset, n): number {
      checkRun("sumSquares", "x", x, xOffset, n);
      if (n === 0) return 0;
      if (!isFloatArray(x)) return referenceBackend.sumSquares(x, xOffset, n);
      return native.sumSquares(x, xOffset, n);
    },

    ...extraMethods(addon as unknown as NativeExtraKernels),
    ...convMethods(addon as unknown as NativeConvKernels),
    ...attentionMethods(addon as unknown as NativeAttentionKernels),
  };
}

function addable(a: TypedArray): boolean {
  return a instanceof Float32Array || a instanceof Float64Array || a instanceof Int32Array;
}

/** SGD keeps a buffer only with momentum; a buffer passed with momentum 0 is left alone. */
function momentum(args: SgdArgs): boolean {
  return args.momentum !== 0 && args.momentumBuffer !== null;
}
