import type { Tensor } from "../tensor/tensor.js";
import { crossEntropy, mseLoss, type Reduction } from "../ops/loss.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";

export interface CrossEntropyLossOptions {
  /** A rescaling weight per class, [C]. */
  weight?: Tensor | null;
  ignoreIndex?: number;
  reduction?: Reduction;
  labelSmoothing?: number;
}

/** torch.nn.CrossEntropyLoss: logits [N, C] (or [N, C, d…]) against class indices or probabilities. */
export class CrossEntropyLoss extends Module {
  readonly ignoreIndex: number;
  readonly reduction: Reduction;
  readonly labelSmoothing: number;
  /** A buffer, as in PyTorch, so that it appears in the state dict. */
  weight: Tensor | null;

  constructor(options: CrossEntropyLossOptions = {}) {
    super();
    checkArity("CrossEntropyLoss", arguments, 1, "new nn.CrossEntropyLoss({ weight, ignoreIndex, reduction, labelSmoothing })");
    checkOptions("CrossEntropyLoss", options, ["weight", "ignoreIndex", "reduction", "labelSmoothing"]);
    this.ignoreIndex = options.ignoreIndex ?? -100;
    this.reduction = options.reduction ?? "mean";
    this.labelSmoothing = options.labelSmoothing ?? 0;
    this.weight = null;
    this.registerBuffer("weight", options.weight ?? null);
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return crossEntropy(input, target, {
      weight: this.weight,
      ignoreIndex: this.ignoreIndex,
      reduction: this.reduction,
      labelSmoothing: this.labelSmoothing,
    });
  }

  override extraRepr(): string {
    return `ignore_index=${this.ignoreIndex}, reduction='${this.reduction}', label_smoothing=${this.labelSmoothing}`;
  }
}

/** torch.nn.MSELoss: the mean (or sum, or none) of squared differences. */
export class MSELoss extends Module {
  readonly reduction: Reduction;

  constructor(options: { reduction?: Reduction } = {}) {
    super();
    checkArity("MSELoss", arguments, 1, "new nn.MSELoss({ reduction })");
    checkOptions("MSELoss", options, ["reduction"]);
    this.reduction = options.reduction ?? "mean";
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return mseLoss(input, target, { reduction: this.reduction });
  }
}
