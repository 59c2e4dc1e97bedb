import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { empty } from "../ops/creation.js";
import { conv1d, conv2d, convPadding, spatialTuple, type ConvPadding } from "../ops/conv.js";
import { pad, type PadMode } from "../ops/pad.js";
import { calculateFanInAndFanOut, kaimingUniform_, uniform_ } from "./init.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface ConvOptions {
  stride?: number | readonly number[];
  /** Per-dim padding, or "valid" (none) or "same" (the output keeps the input's size; stride 1). */
  padding?: ConvPadding;
  dilation?: number | readonly number[];
  groups?: number;
  bias?: boolean;
  /** How the padding is filled: "zeros" (default), "reflect", "replicate" or "circular". */
  paddingMode?: "zeros" | PadMode;
  dtype?: DType;
  generator?: Generator;
}

const KEYS = ["stride", "padding", "dilation", "groups", "bias", "paddingMode", "dtype", "generator"];
const PADDING_MODES = ["zeros", "reflect", "replicate", "circular"];

/** The shared part of Conv1d and Conv2d (torch.nn.modules.conv._ConvNd). */
abstract class ConvNd extends Module {
  readonly inChannels: number;
  readonly outChannels: number;
  readonly kernelSize: readonly number[];
  readonly stride: readonly number[];
  readonly padding: readonly number[] | "same" | "valid";
  readonly dilation: readonly number[];
  readonly groups: number;
  readonly paddingMode: "zeros" | PadMode;
  weight: Parameter;
  bias: Parameter | null;

  constructor(where: string, dims: number, inChannels: number, outChannels: number, kernelSize: number | readonly number[], options: ConvOptions) {
    super();
    checkOptions(where, options, KEYS);
    for (const [name, v] of [["inChannels", inChannels], ["outChannels", outChannels]] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`${where}: ${name} must be a positive integer, got ${v}`);
    }
    const groups = options.groups ?? 1;
    if (!Number.isInteger(groups) || groups < 1) throw new RangeError(`${where}: groups must be a positive integer, got ${JSON.stringify(groups)}`);
    if (inChannels % groups !== 0) throw new RangeError(`${where}: inChannels (${inChannels}) must be divisible by groups (${groups})`);
    if (outChannels % groups !== 0) throw new RangeError(`${where}: outChannels (${outChannels}) must be divisible by groups (${groups})`);
    const paddingMode = options.paddingMode ?? "zeros";
    if (!PADDING_MODES.includes(paddingMode)) throw new RangeError(`${where}: paddingMode must be one of ${PADDING_MODES.join(", ")}, got ${JSON.stringify(paddingMode)}`);
    this.inChannels = inChannels;
    this.outChannels = outChannels;
    this.kernelSize = spatialTuple(where, "kernelSize", kernelSize, dims, 1);
    this.stride = spatialTuple(where, "stride", options.stride ?? 1, dims, 1);
    this.dilation = spatialTuple(where, "dilation", options.dilation ?? 1, dims, 1);
    const padding = options.padding ?? 0;
    // Checked now (a strided "same" fails at construction, as in PyTorch).
    convPadding(where, padding, this.kernelSize, this.dilation, this.stride);
    this.padding = typeof padding === "string" ? padding : spatialTuple(where, "padding", padding, dims, 0);
    this.groups = groups;
    this.paddingMode = paddingMode;
    const dtype = options.dtype ?? "float32";
    this.weight = new Parameter(empty([outChannels, inChannels / groups, ...this.kernelSize], { dtype }));
    this.bias = options.bias === false ? null : new Parameter(empty([outChannels], { dtype }));
    this.resetParameters(options.generator);
  }

  /** PyTorch's initialisation: kaiming_uniform(a=√5) on the weight, U(±1/√fanIn) on the bias. */
  resetParameters(generator?: Generator): void {
    kaimingUniform_(this.weight, { a: Math.sqrt(5), generator });
    if (this.bias) {
      const [fanIn] = calculateFanInAndFanOut(this.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      uniform_(this.bias, -bound, bound, generator);
    }
  }

  /** The input padded by a non-zero paddingMode (then the convolution itself pads nothing). */
  protected padded(x: Tensor): [Tensor, ConvPadding] {
    if (this.paddingMode === "zeros") return [x, this.padding];
    const pads = convPadding(this.constructor.name, this.padding, this.kernelSize, this.dilation, this.stride);
    const flat = pads.reverse().flatMap(([before, after]) => [before, after]);
    return [pad(x, flat, this.paddingMode), 0];
  }

  override extraRepr(): string {
    const parts = [`${this.inChannels}, ${this.outChannels}, kernel_size=(${this.kernelSize.join(", ")})`, `stride=(${this.stride.join(", ")})`];
    if (typeof this.padding === "string" || this.padding.some((p) => p !== 0)) parts.push(`padding=${typeof this.padding === "string" ? this.padding : `(${this.padding.join(", ")})`}`);
    if (this.dilation.some((d) => d !== 1)) parts.push(`dilation=(${this.dilation.join(", ")})`);
    if (this.groups !== 1) parts.push(`groups=${this.groups}`);
    if (!this.bias) parts.push("bias=False");
    if (this.paddingMode !== "zeros") parts.push(`padding_mode=${this.paddingMode}`);
    return parts.join(", ");
  }
}

/** A 2-d convolution over [N, C, H, W] (or [C, H, W]) inputs (torch.nn.Conv2d). */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number | readonly number[], options: ConvOptions = {}) {
    checkArity("Conv2d", arguments, 4, "new nn.Conv2d(inChannels, outChannels, kernelSize, { stride, padding, dilation, groups, bias, paddingMode })");
    super("Conv2d", 2, inChannels, outChannels, kernelSize, options);
  }

  override forward(x: Tensor): Tensor {
    const [input, padding] = this.padded(x);
    return conv2d(input, this.weight, this.bias, { stride: this.stride, padding, dilation: this.dilation, groups: this.groups });
  }
}

/** A 1-d convolution over [N, C, L] (or [C, L]) inputs (torch.nn.Conv1d). */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number | readonly number[], options: ConvOptions = {}) {
    checkArity("Conv1d", arguments, 4, "new nn.Conv1d(inChannels, outChannels, kernelSize, { stride, padding, dilation, groups, bias, paddingMode })");
    super("Conv1d", 1, inChannels, outChannels, kernelSize, options);
  }

  override forward(x: Tensor): Tensor {
    const [input, padding] = this.padded(x);
    return conv1d(input, this.weight, this.bias, { stride: this.stride, padding, dilation: this.dilation, groups: this.groups });
  }
}
