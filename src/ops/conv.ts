import type { ConvGeometry } from "../backend/backend.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { convForward } from "./conv_kernels.js";
import { assertFloating, assertSameDType, assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";
import { to } from "./creation.js";

export type ConvPadding = number | readonly number[] | "same" | "valid";

export interface ConvOptions {
  stride?: number | readonly number[];
  /** Zeros added on both sides of each spatial dim, or "valid" (none) or "same" (output size = input size; stride 1 only). */
  padding?: ConvPadding;
  dilation?: number | readonly number[];
  groups?: number;
}

const CONV_KEYS = ["stride", "padding", "dilation", "groups"];

/** A per-dim integer parameter: one number for every spatial dim, or one per dim. */
export function spatialTuple(where: string, name: string, value: number | readonly number[], dims: number, min: number): number[] {
  const list = typeof value === "number" ? new Array<number>(dims).fill(value) : Array.isArray(value) ? [...(value as number[])] : null;
  if (!list || list.length !== dims || list.some((v) => !Number.isInteger(v) || v < min)) {
    throw new RangeError(`${where}: ${name} must be an integer ≥ ${min} or an array of ${dims} of them, got ${JSON.stringify(value)}`);
  }
  return list;
}

/**
 * The [before, after] zero padding of each spatial dim. "same" pads the dilated kernel's extent
 * minus one, the odd element after (as PyTorch does for even kernels).
 */
export function convPadding(where: string, padding: ConvPadding, kernel: readonly number[], dilation: readonly number[], stride: readonly number[]): [number, number][] {
  const dims = kernel.length;
  if (padding === "valid") return kernel.map(() => [0, 0]);
  if (padding === "same") {
    if (stride.some((s) => s !== 1)) throw new RangeError(`${where}: padding "same" is not supported for strided convolutions (stride ${JSON.stringify(stride)}), as in PyTorch`);
    return kernel.map((k, i) => {
      const total = dilation[i] * (k - 1);
      return [Math.floor(total / 2), total - Math.floor(total / 2)];
    });
  }
  if (typeof padding === "string") throw new RangeError(`${where}: padding must be a number, an array, "same" or "valid", got ${JSON.stringify(padding)}`);
  return spatialTuple(where, "padding", padding, dims, 0).map((p) => [p, p]);
}

/**
 * torch.nn.functional.conv2d: x [N, C, H, W] (or unbatched [C, H, W]), weight
 * [outChannels, C / groups, kH, kW], bias [outChannels] or null.
 */
export function conv2d(x: Tensor, weight: Tensor, bias?: Tensor | null, options: ConvOptions = {}): Tensor {
  return convNd("conv2d", 2, x, weight, bias ?? null, options);
}

/** torch.nn.functional.conv1d: x [N, C, L] (or unbatched [C, L]), weight [outChannels, C / groups, k]. */
export function conv1d(x: Tensor, weight: Tensor, bias?: Tensor | null, options: ConvOptions = {}): Tensor {
  return convNd("conv1d", 1, x, weight, bias ?? null, options);
}

function convNd(where: string, dims: 1 | 2, x: Tensor, weight: Tensor, bias: Tensor | null, options: ConvOptions): Tensor {
  assertTensor(x, where);
  assertTensor(weight, where, "weight");
  // bfloat16 as PyTorch's CPU convolution: float32 products and sums, rounded once; every operand
  // must be bfloat16 then (PyTorch refuses a mixed input and weight).
  if (hasBFloat16(x, weight, bias)) {
    assertSameDType(x, weight, where);
    if (bias) assertSameDType(x, bias, where);
    return inFloat32((...a: [Tensor, Tensor, Tensor | null]) => convNd(where, dims, a[0], a[1], a[2], options), [x, weight, bias]);
  }
  // int32 convolves as PyTorch's slow integer path does, computed exactly in float64 (sums of int32
  // products stay below 2^53 for any kernel that fits in memory) and converted back.
  if (x.dtype === "int32") {
    assertSameDType(x, weight, where);
    const dilation = options.dilation ?? 1;
    if ((Array.isArray(dilation) ? dilation : [dilation]).some((d) => d !== 1)) throw new TypeError(`${where}: dilated convolution of int32 tensors is not supported (as in PyTorch); convert to float32 first`);
    if (bias) assertSameDType(x, bias, where);
    const wide = (t: Tensor | null) => (t ? to(t, "float64") : null);
    return to(convNd(where, dims, wide(x)!, wide(weight)!, wide(bias), options), "int32");
  }
  checkOptions(where, options, CONV_KEYS);
  assertFloating(x, where);
  assertSameDType(x, weight, where);
  if (x.ndim !== dims + 1 && x.ndim !== dims + 2) {
    throw new RangeError(`${where}: expected a ${dims + 1}-d (unbatched) or ${dims + 2}-d (batched) input, got shape ${formatShape(x.shape)}`);
  }
  if (weight.ndim !== dims + 2) {
    throw new RangeError(`${where}: expected a ${dims + 2}-d weight [outChannels, inChannels / groups, ${dims === 2 ? "kH, kW" : "k"}], got shape ${formatShape(weight.shape)}`);
  }
  const groups = options.groups ?? 1;
  if (!Number.isInteger(groups) || groups < 1) throw new RangeError(`${where}: groups must be a positive integer, got ${JSON.stringify(groups)}`);
  const batched = x.ndim === dims + 2;
  const input = batched ? x : reshape(x, [1, ...x.shape]);
  const [n, c] = input.shape;
  const [outChannels, cpg] = weight.shape;
  if (outChannels % groups !== 0) throw new RangeError(`${where}: the weight's ${outChannels} output channels (shape ${formatShape(weight.shape)}) must divide into groups=${groups}`);
  if (cpg * groups !== c) {
    throw new RangeError(`${where}: the weight ${formatShape(weight.shape)} with groups=${groups} expects ${cpg * groups} input channels, but the input ${formatShape(x.shape)} has ${c}`);
  }
  if (bias) {
    assertTensor(bias, where, "bias");
    assertSameDType(x, bias, where);
    if (bias.ndim !== 1 || bias.shape[0] !== outChannels) throw new RangeError(`${where}: the bias must have shape [${outChannels}], got ${formatShape(bias.shape)}`);
  }
  const kernel = weight.shape.slice(2);
  const stride = spatialTuple(where, "stride", options.stride ?? 1, dims, 1);
  const dilation = spatialTuple(where, "dilation", options.dilation ?? 1, dims, 1);
  const pads = convPadding(where, options.padding ?? 0, kernel, dilation, stride);
  const spatial = input.shape.slice(2);
  const out = spatial.map((size, i) => {
    const padded = size + pads[i][0] + pads[i][1];
    const extent = dilation[i] * (kernel[i] - 1) + 1;
    if (padded < extent) {
      const dim = dims === 1 ? "length" : i === 0 ? "height" : "width";
      throw new RangeError(
        `${where}: the kernel (size ${kernel[i]}, dilation ${dilation[i]}: extent ${extent}) is larger than the padded input ${dim} (${size} + padding ${pads[i][0] + pads[i][1]} = ${padded}) of input ${formatShape(x.shape)}`,
      );
    }
    return Math.floor((padded - extent) / stride[i]) + 1;
  });
  // conv1d is conv2d over a height of 1.
  const at = (list: readonly number[], i: number, one: number) => (dims === 1 ? (i === 0 ? one : list[0]) : list[i]);
  const geometry: ConvGeometry = {
    batch: n, inChannels: c, height: at(spatial, 0, 1), width: at(spatial, 1, 1),
    outChannels, outHeight: at(out, 0, 1), outWidth: at(out, 1, 1),
    kernelH: at(kernel, 0, 1), kernelW: at(kernel, 1, 1), strideH: at(stride, 0, 1), strideW: at(stride, 1, 1),
    padH: dims === 1 ? 0 : pads[0][0], padW: dims === 1 ? pads[0][0] : pads[1][0],
    dilationH: at(dilation, 0, 1), dilationW: at(dilation, 1, 1), groups,
  };
  const x4 = dims === 1 ? reshape(input, [n, c, 1, spatial[0]]) : input;
  const w4 = dims === 1 ? reshape(weight, [outChannels, cpg, 1, kernel[0]]) : weight;
  const y = convForward(geometry, x4, w4, bias);
  const shaped = dims === 1 ? reshape(y, [n, outChannels, out[0]]) : y;
  return batched ? shaped : reshape(shaped, shaped.shape.slice(1));
}
