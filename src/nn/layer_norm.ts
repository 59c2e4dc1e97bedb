import type { DType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { ones, zeros } from "../ops/creation.js";
import { layerNorm } from "../ops/norm.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface LayerNormOptions {
  eps?: number;
  /** Learn a per-element scale (and shift, unless bias is false). */
  elementwiseAffine?: boolean;
  bias?: boolean;
  dtype?: DType;
}

/** Normalises the trailing dims to zero mean and unit variance (torch.nn.LayerNorm). */
export class LayerNorm extends Module {
  readonly normalizedShape: readonly number[];
  readonly eps: number;
  weight: Parameter | null;
  bias: Parameter | null;

  constructor(normalizedShape: number | readonly number[], options: LayerNormOptions = {}) {
    super();
    checkArity("LayerNorm", arguments, 2, "new nn.LayerNorm(normalizedShape, { eps, elementwiseAffine, bias, dtype })");
    checkOptions("LayerNorm", options, ["eps", "elementwiseAffine", "bias", "dtype"]);
    this.normalizedShape = typeof normalizedShape === "number" ? [normalizedShape] : [...normalizedShape];
    this.eps = options.eps ?? 1e-5;
    const affine = options.elementwiseAffine ?? true;
    const dtype = options.dtype ?? "float32";
    this.weight = affine ? new Parameter(ones(this.normalizedShape, { dtype })) : null;
    this.bias = affine && options.bias !== false ? new Parameter(zeros(this.normalizedShape, { dtype })) : null;
  }

  override forward(x: Tensor): Tensor {
    return layerNorm(x, this.normalizedShape, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `[${this.normalizedShape.join(", ")}], eps=${this.eps}, elementwise_affine=${this.weight !== null}`;
  }
}
