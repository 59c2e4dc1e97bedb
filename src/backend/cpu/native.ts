import type { NativeArena } from "../../tensor/arena.js";
import type { TypedArray } from "../backend.js";

export type FloatArray = Float32Array | Float64Array;

/**
 * The kernel functions of build/Release/ringtorch.node (native/kernels/napi_*.cc), argument for
 * argument. They trust shapes and bounds (index.ts checks those first) but check that every array
 * argument is a typed array of the expected kind. Strided layouts travel packed in a Float64Array
 * (see layout.ts) so that one call never builds JS objects.
 */
export interface NativeKernels extends NativeArena {
  setNumThreads(n: number): void;
  getNumThreads(): number;
  /** Reports memory V8 does not see (napi_adjust_external_memory); see setFreshMemoryReporter. */
  adjustExternalMemory(bytes: number): void;
  /** Selects "portable", "avx2", "avx512" or "auto"; false (and no change) if the CPU can't run it. */
  setIsa(name: string): boolean;
  getIsa(): string;
  isaSupported(name: string): boolean;

  /** params: [batch, m, n, k, aOffset, aRowStride, aColStride, aBatchStride, bOffset, bRowStride, bColStride, bBatchStride, outOffset, alpha, beta] */
  matmul(a: FloatArray, b: FloatArray, out: FloatArray, params: Float64Array): void;
  /** Same params as matmul; a and b Float32Array or Uint16Array (bfloat16), out Float32Array. */
  matmulBf16(a: Float32Array | Uint16Array, b: Float32Array | Uint16Array, out: Float32Array, params: Float64Array): void;
  /** The bfloat16 GEMM's path ("amx", "avx512bf16" or "portable"); with a name, selects it and says whether it can run. */
  bf16GemmPath(): string;
  bf16GemmPath(name: string): boolean;
  unary(op: number, x: FloatArray, xOffset: number, out: FloatArray, n: number, p0: number, p1: number): void;
  unaryGrad(op: number, grad: FloatArray, saved: FloatArray, savedOffset: number, out: FloatArray, n: number, p0: number, p1: number): void;
  /** layout: [ndim, aOffset, bOffset, ...shape, ...aStrides, ...bStrides] */
  binary(op: number, a: FloatArray, b: FloatArray, out: TypedArray, layout: Float64Array): void;
  /** binary over one dense run of n elements of each operand (no layout); absent from addons built before it. */
  binaryFlat?(op: number, a: FloatArray, aOffset: number, b: FloatArray, bOffset: number, out: TypedArray, n: number): void;
  /** layout: [ndim, condOffset, aOffset, bOffset, ...shape, ...condStrides, ...aStrides, ...bStrides] */
  where(cond: Uint8Array, a: TypedArray, b: TypedArray, out: TypedArray, layout: Float64Array): void;
  /** layout: [ndim, srcOffset, outOffset, ...shape, ...srcStrides] */
  copy(src: TypedArray, out: TypedArray, layout: Float64Array): void;
  reduce(op: number, x: FloatArray, xOffset: number, outer: number, size: number, inner: number, out: FloatArray, indices: Int32Array | null): void;
  sumSquares(x: FloatArray, xOffset: number, n: number): number;
  softmax(x: FloatArray, xOffset: number, rows: number, cols: number, log: boolean, out: FloatArray): void;
  softmaxBackward(grad: FloatArray, y: FloatArray, rows: number, cols: number, log: boolean, out: FloatArray): void;
  crossEntropy(x: FloatArray, xOffset: number, rows: number, cols: number, target: Int32Array, targetOffset: number, ignoreIndex: number, smoothing: number, loss: FloatArray, stats: FloatArray): void;
  crossEntropyBackward(
    x: FloatArray,
    xOffset: number,
    rows: number,
    cols: number,
    target: Int32Array,
    targetOffset: number,
    ignoreIndex: number,
    smoothing: number,
    stats: FloatArray,
    scale: FloatArray,
    out: FloatArray,
  ): void;
  layerNorm(x: FloatArray, rows: number, cols: number, weight: FloatArray | null, bias: FloatArray | null, eps: number, out: FloatArray, mean: FloatArray, rstd: FloatArray): void;
  layerNormBackward(
    grad: FloatArray,
    x: FloatArray,
    rows: number,
    cols: number,
    weight: FloatArray | null,
    mean: FloatArray,
    rstd: FloatArray,
    gradX: FloatArray,
    gradWeight: FloatArray | null,
    gradBias: FloatArray | null,
  ): void;
  /** Throw if an index is outside [0, size). */
  indexSelect(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void;
  indexAdd(grad: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void;
  gather(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;
  scatterAdd(src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;
  triangle(x: TypedArray, batch: number, rows: number, cols: number, diagonal: number, upper: boolean, out: TypedArray): void;
  /** params: [n, lr, beta1, beta2, eps, weightDecay, decoupled, step, maximize] */
  adamStep(param: FloatArray, grad: FloatArray, expAvg: FloatArray, expAvgSq: FloatArray, maxExpAvgSq: FloatArray | null, params: Float64Array): void;
  /** params: [n, lr, momentum, dampening, nesterov, weightDecay, maximize, firstStep] */
  sgdStep(param: FloatArray, grad: FloatArray, momentumBuffer: FloatArray | null, params: Float64Array): void;
}

/** The whole addon as loaded: the kernels plus whatever other areas (comm) register. */
export type NativeAddon = NativeKernels & Record<string, unknown>;
