import type { AvgPoolWindows, MaxPoolGeometry } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape } from "../tensor/shape.js";
import { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { spatialTuple } from "./conv.js";
import { gather } from "./gather.js";
import { assertFloating, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";
import { to } from "./creation.js";
import { lt, where as select } from "./elementwise.js";

export interface MaxPool2dOptions {
  /** Default: the kernel size. */
  stride?: number | readonly number[] | null;
  padding?: number | readonly number[];
  dilation?: number | readonly number[];
  ceilMode?: boolean;
  /** Also return the flat position (within its h·w plane, int32) of each maximum. */
  returnIndices?: boolean;
}

export interface AvgPool2dOptions {
  stride?: number | readonly number[] | null;
  padding?: number | readonly number[];
  ceilMode?: boolean;
  /** Count the zero padding in each window's divisor (PyTorch's default, true). */
  countIncludePad?: boolean;
  /** Divide every window's sum by this instead. */
  divisorOverride?: number | null;
}

/** An input of [N, C, H, W] or unbatched [C, H, W], seen as planes × H × W. */
function planesOf(where: string, x: Tensor): { planes: number; h: number; w: number; lead: number[] } {
  assertTensor(x, where);
  assertFloating(x, where);
  if (x.ndim !== 3 && x.ndim !== 4) throw new RangeError(`${where}: expected a 3-d (unbatched) or 4-d (batched) input, got shape ${formatShape(x.shape)}`);
  const lead = x.shape.slice(0, -2);
  const [h, w] = x.shape.slice(-2);
  return { planes: lead.reduce((a, b) => a * b, 1), h, w, lead };
}

/** PyTorch's pooling_output_shape, with its ceil-mode rule that the last window starts inside. */
function pooledSize(where: string, size: number, kernel: number, pad: number, stride: number, dilation: number, ceil: boolean, shape: readonly number[]): number {
  let out = Math.floor((size + 2 * pad - dilation * (kernel - 1) - 1 + (ceil ? stride - 1 : 0)) / stride) + 1;
  if (ceil && (out - 1) * stride >= size + pad) out--;
  if (out < 1) {
    throw new RangeError(`${where}: the kernel (size ${kernel}, dilation ${dilation}) does not fit the padded input ${size} + 2·${pad} of shape ${formatShape(shape)}: the output size would be ${out}`);
  }
  return out;
}

function checkPad(where: string, pad: readonly number[], kernel: readonly number[]): void {
  pad.forEach((p, i) => {
    if (p * 2 > kernel[i]) throw new RangeError(`${where}: padding should be at most half of the kernel size, got padding ${p} for kernel ${kernel[i]}`);
  });
}

/** torch.nn.functional.max_pool2d; with returnIndices, [values, indices]. */
export function maxPool2d(x: Tensor, kernelSize: number | readonly number[], options?: MaxPool2dOptions & { returnIndices?: false }): Tensor;
export function maxPool2d(x: Tensor, kernelSize: number | readonly number[], options: MaxPool2dOptions & { returnIndices: true }): [Tensor, Tensor];
export function maxPool2d(x: Tensor, kernelSize: number | readonly number[], options: MaxPool2dOptions = {}): Tensor | [Tensor, Tensor] {
  const where = "maxPool2d";
  // bfloat16 pools in float32 (exact: a maximum needs no rounding) and rounds back.
  if (hasBFloat16(x)) return inFloat32(maxPool2d as (...a: unknown[]) => Tensor | [Tensor, Tensor], [x, kernelSize, options]);
  // int32 maxima in float64 are exact; PyTorch pools integers too (not bool).
  if (x instanceof Tensor && x.dtype === "int32") {
    const r = maxPool2d(to(x, "float64"), kernelSize, { ...options, returnIndices: true });
    const values = to(r[0], "int32");
    return options.returnIndices ? [values, r[1]] : values;
  }
  checkOptions(where, options, ["stride", "padding", "dilation", "ceilMode", "returnIndices"]);
  const { planes, h, w, lead } = planesOf(where, x);
  const kernel = spatialTuple(where, "kernelSize", kernelSize, 2, 1);
  const stride = spatialTuple(where, "stride", options.stride ?? kernel, 2, 1);
  const pad = spatialTuple(where, "padding", options.padding ?? 0, 2, 0);
  const dilation = spatialTuple(where, "dilation", options.dilation ?? 1, 2, 1);
  checkPad(where, pad, kernel);
  const ceil = options.ceilMode ?? false;
  const oh = pooledSize(where, h, kernel[0], pad[0], stride[0], dilation[0], ceil, x.shape);
  const ow = pooledSize(where, w, kernel[1], pad[1], stride[1], dilation[1], ceil, x.shape);
  const g: MaxPoolGeometry = {
    planes, height: h, width: w, outHeight: oh, outWidth: ow, kernelH: kernel[0], kernelW: kernel[1],
    strideH: stride[0], strideW: stride[1], padH: pad[0], padW: pad[1], dilationH: dilation[0], dilationW: dilation[1],
  };
  const xc = contiguousData(x);
  const out = emptyTensor(x.dtype, [...lead, oh, ow]);
  const indices = emptyTensor("int32", [...lead, oh, ow]);
  getBackend().maxPool2d(g, xc.storage.data.subarray(xc.offset, xc.offset + xc.numel), out.storage.data, indices.storage.data as Int32Array);
  // With padding and ceil mode a window can lie wholly in the padding: its maximum is -inf at index
  // -1, and its gradient goes nowhere (PyTorch writes it at an index past the window, even past
  // the plane; see the README's differences).
  const empty = windowMissesInput(h, oh, kernel[0], stride[0], pad[0], dilation[0]) || windowMissesInput(w, ow, kernel[1], stride[1], pad[1], dilation[1]);
  record(out, "MaxPool2DWithIndicesBackward", [x], (grad) => [maxPoolBackward(grad, indices, x.shape, planes, h * w, empty)]);
  return options.returnIndices ? [out, indices] : out;
}

/**
 * The gradient of max pooling: each window's gradient added at its maximum's position. Its own
 * gradient is a gather at the same positions (the public op, so higher orders work too).
 */
function maxPoolBackward(grad: Tensor, indices: Tensor, inShape: readonly number[], planes: number, size: number, empty: boolean): Tensor {
  if (empty) {
    const missing = lt(indices, 0);
    return maxPoolBackward(select(missing, 0, grad), select(missing, 0, indices), inShape, planes, size, false);
  }
  const gc = contiguousData(grad);
  const out = emptyTensor(grad.dtype, inShape);
  const backend = getBackend();
  backend.fill(out.storage.data, 0, out.numel, 0);
  const k = indices.numel / Math.max(1, planes);
  backend.scatterAdd(gc.storage.data.subarray(gc.offset, gc.offset + gc.numel), planes, size, 1, indices.storage.data as Int32Array, k, out.storage.data);
  return record(out, "MaxPool2DWithIndicesBackwardBackward", [grad], (h) => [reshape(gather(reshape(h, [planes, size]), 1, reshape(indices, [planes, k])), grad.shape)]);
}

/** Whether some window along one dim has no position inside the input (all in the padding). */
function windowMissesInput(size: number, out: number, kernel: number, stride: number, pad: number, dilation: number): boolean {
  for (let i = 0; i < out; i++) {
    let inside = false;
    for (let k = 0; k < kernel && !inside; k++) {
      const at = i * stride - pad + k * dilation;
      inside = at >= 0 && at < size;
    }
    if (!inside) return true;
  }
  return false;
}

function windowsOf(planes: number, h: number, w: number, rows: [number, number, number][], cols: [number, number, number][], divisor: (i: number, j: number) => number): AvgPoolWindows {
  const divisors = new Float64Array(rows.length * cols.length);
  for (let i = 0; i < rows.length; i++) for (let j = 0; j < cols.length; j++) divisors[i * cols.length + j] = divisor(i, j);
  return {
    planes, height: h, width: w, outHeight: rows.length, outWidth: cols.length,
    hStart: Int32Array.from(rows, (r) => r[0]), hEnd: Int32Array.from(rows, (r) => r[1]),
    wStart: Int32Array.from(cols, (c) => c[0]), wEnd: Int32Array.from(cols, (c) => c[1]),
    divisors,
  };
}

/** [start, end, padded size] of each window along one dim, as PyTorch's avg_pool2d computes them. */
function avgSpans(size: number, out: number, kernel: number, stride: number, pad: number): [number, number, number][] {
  return Array.from({ length: out }, (_, i) => {
    const start = i * stride - pad;
    const end = Math.min(start + kernel, size + pad);
    return [Math.max(start, 0), Math.min(end, size), end - start];
  });
}

/** Windows averaged by the backend, with the gradient its adjoint (and that one's the forward). */
function windowAverage(x: Tensor, win: AvgPoolWindows, outShape: readonly number[], name: string): Tensor {
  const xc = contiguousData(x);
  const out = emptyTensor(x.dtype, outShape);
  getBackend().avgPool2d(win, xc.storage.data.subarray(xc.offset, xc.offset + xc.numel), out.storage.data);
  return record(out, name, [x], (g) => [windowAverageBackward(g, win, x.shape, name)]);
}

function windowAverageBackward(g: Tensor, win: AvgPoolWindows, inShape: readonly number[], name: string): Tensor {
  const gc = contiguousData(g);
  const out = emptyTensor(g.dtype, inShape);
  getBackend().avgPool2dBackward(win, gc.storage.data.subarray(gc.offset, gc.offset + gc.numel), out.storage.data);
  return record(out, `${name}Backward`, [g], (h) => [windowAverage(h, win, g.shape, name)]);
}

/** torch.nn.functional.avg_pool2d. */
export function avgPool2d(x: Tensor, kernelSize: number | readonly number[], options: AvgPool2dOptions = {}): Tensor {
  const where = "avgPool2d";
  if (hasBFloat16(x)) return inFloat32(avgPool2d, [x, kernelSize, options]);
  checkOptions(where, options, ["stride", "padding", "ceilMode", "countIncludePad", "divisorOverride"]);
  const { planes, h, w, lead } = planesOf(where, x);
  const kernel = spatialTuple(where, "kernelSize", kernelSize, 2, 1);
  const stride = spatialTuple(where, "stride", options.stride ?? kernel, 2, 1);
  const pad = spatialTuple(where, "padding", options.padding ?? 0, 2, 0);
  checkPad(where, pad, kernel);
  const override = options.divisorOverride ?? null;
  if (override !== null && (!Number.isFinite(override) || override === 0)) throw new RangeError(`${where}: divisorOverride must be a non-zero number, got ${override}`);
  const ceil = options.ceilMode ?? false;
  const oh = pooledSize(where, h, kernel[0], pad[0], stride[0], 1, ceil, x.shape);
  const ow = pooledSize(where, w, kernel[1], pad[1], stride[1], 1, ceil, x.shape);
  const rows = avgSpans(h, oh, kernel[0], stride[0], pad[0]);
  const cols = avgSpans(w, ow, kernel[1], stride[1], pad[1]);
  const includePad = options.countIncludePad ?? true;
  const win = windowsOf(planes, h, w, rows, cols, (i, j) =>
    override ?? (includePad ? rows[i][2] * cols[j][2] : (rows[i][1] - rows[i][0]) * (cols[j][1] - cols[j][0])),
  );
  return windowAverage(x, win, [...lead, oh, ow], "AvgPool2D");
}

/** torch.nn.functional.adaptive_avg_pool2d: outputSize is one size, or [h, w] where null keeps that dim. */
export function adaptiveAvgPool2d(x: Tensor, outputSize: number | readonly (number | null)[]): Tensor {
  const where = "adaptiveAvgPool2d";
  if (hasBFloat16(x)) return inFloat32(adaptiveAvgPool2d, [x, outputSize]);
  const { planes, h, w, lead } = planesOf(where, x);
  const sizes = typeof outputSize === "number" ? [outputSize, outputSize] : Array.isArray(outputSize) && outputSize.length === 2 ? [outputSize[0] ?? h, outputSize[1] ?? w] : null;
  if (!sizes || sizes.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new RangeError(`${where}: outputSize must be a non-negative integer or [h, w] of them (null keeps the input's), got ${JSON.stringify(outputSize)}`);
  }
  if (x.shape.slice(-2).some((s) => s === 0)) throw new RangeError(`${where}: expected non-empty height and width, got input ${formatShape(x.shape)}`);
  // PyTorch's adaptive windows: [floor(i·in/out), ceil((i+1)·in/out)).
  const spans = (size: number, out: number) => Array.from({ length: out }, (_, i): [number, number, number] => {
    const start = Math.floor((i * size) / out);
    const end = Math.ceil(((i + 1) * size) / out);
    return [start, end, end - start];
  });
  const rows = spans(h, sizes[0]);
  const cols = spans(w, sizes[1]);
  const win = windowsOf(planes, h, w, rows, cols, (i, j) => rows[i][2] * cols[j][2]);
  return windowAverage(x, win, [...lead, sizes[0], sizes[1]], "AdaptiveAvgPool2D");
}

