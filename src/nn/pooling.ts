import type { Tensor } from "../tensor/tensor.js";
import { adaptiveAvgPool2d, avgPool2d, maxPool2d, type AvgPool2dOptions, type MaxPool2dOptions } from "../ops/pool.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";

/** torch.nn.MaxPool2d; with returnIndices its forward returns [values, indices]. */
export class MaxPool2d extends Module {
  readonly kernelSize: number | readonly number[];
  readonly options: MaxPool2dOptions;

  constructor(kernelSize: number | readonly number[], options: MaxPool2dOptions = {}) {
    super();
    checkArity("MaxPool2d", arguments, 2, "new nn.MaxPool2d(kernelSize, { stride, padding, dilation, ceilMode, returnIndices })");
    checkOptions("MaxPool2d", options, ["stride", "padding", "dilation", "ceilMode", "returnIndices"]);
    this.kernelSize = kernelSize;
    this.options = { ...options };
  }

  override forward(x: Tensor): Tensor | [Tensor, Tensor] {
    return maxPool2d(x, this.kernelSize, this.options as MaxPool2dOptions & { returnIndices: true });
  }

  override extraRepr(): string {
    const o = this.options;
    return `kernel_size=${JSON.stringify(this.kernelSize)}, stride=${JSON.stringify(o.stride ?? this.kernelSize)}, padding=${JSON.stringify(o.padding ?? 0)}, dilation=${JSON.stringify(o.dilation ?? 1)}, ceil_mode=${o.ceilMode ?? false}`;
  }
}

/** torch.nn.AvgPool2d. */
export class AvgPool2d extends Module {
  readonly kernelSize: number | readonly number[];
  readonly options: AvgPool2dOptions;

  constructor(kernelSize: number | readonly number[], options: AvgPool2dOptions = {}) {
    super();
    checkArity("AvgPool2d", arguments, 2, "new nn.AvgPool2d(kernelSize, { stride, padding, ceilMode, countIncludePad, divisorOverride })");
    checkOptions("AvgPool2d", options, ["stride", "padding", "ceilMode", "countIncludePad", "divisorOverride"]);
    this.kernelSize = kernelSize;
    this.options = { ...options };
  }

  override forward(x: Tensor): Tensor {
    return avgPool2d(x, this.kernelSize, this.options);
  }

  override extraRepr(): string {
    const o = this.options;
    return `kernel_size=${JSON.stringify(this.kernelSize)}, stride=${JSON.stringify(o.stride ?? this.kernelSize)}, padding=${JSON.stringify(o.padding ?? 0)}`;
  }
}

/** torch.nn.AdaptiveAvgPool2d: outputSize is one size, or [h, w] with null keeping that dim. */
export class AdaptiveAvgPool2d extends Module {
  readonly outputSize: number | readonly (number | null)[];

  constructor(outputSize: number | readonly (number | null)[]) {
    super();
    checkArity("AdaptiveAvgPool2d", arguments, 1, "new nn.AdaptiveAvgPool2d(outputSize)");
    this.outputSize = outputSize;
  }

  override forward(x: Tensor): Tensor {
    return adaptiveAvgPool2d(x, this.outputSize);
  }

  override extraRepr(): string {
    return `output_size=${JSON.stringify(this.outputSize)}`;
  }
}
