import type { DType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { ones, zeros } from "../ops/creation.js";
import { groupNorm } from "../ops/group_norm.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface GroupNormOptions {
  eps?: number;
  /** Learn a per-channel scale and shift. */
  affine?: boolean;
  dtype?: DType;
}

/** Normalises each sample over groups of channels (torch.nn.GroupNorm). */
export class GroupNorm extends Module {
  readonly numGroups: number;
  readonly numChannels: number;
  readonly eps: number;
  readonly affine: boolean;
  weight: Parameter | null;
  bias: Parameter | null;

  constructor(numGroups: number, numChannels: number, options: GroupNormOptions = {}) {
    super();
    checkArity("GroupNorm", arguments, 3, "new nn.GroupNorm(numGroups, numChannels, { eps, affine })");
    checkOptions("GroupNorm", options, ["eps", "affine", "dtype"]);
    if (!Number.isInteger(numGroups) || numGroups < 1 || !Number.isInteger(numChannels) || numChannels % numGroups !== 0) {
      throw new RangeError(`GroupNorm: numChannels (${numChannels}) must be divisible by numGroups (${numGroups})`);
    }
    this.numGroups = numGroups;
    this.numChannels = numChannels;
    this.eps = options.eps ?? 1e-5;
    this.affine = options.affine ?? true;
    const dtype = options.dtype ?? "float32";
    this.weight = this.affine ? new Parameter(ones([numChannels], { dtype })) : null;
    this.bias = this.affine ? new Parameter(zeros([numChannels], { dtype })) : null;
  }

  override forward(x: Tensor): Tensor {
    return groupNorm(x, this.numGroups, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `${this.numGroups}, ${this.numChannels}, eps=${this.eps}, affine=${this.affine}`;
  }
}
