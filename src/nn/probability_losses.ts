import type { Tensor } from "../tensor/tensor.js";
import { binaryCrossEntropy, binaryCrossEntropyWithLogits } from "../ops/binary_cross_entropy.js";
import type { Reduction } from "../ops/loss.js";
import { checkReduction, nllLoss } from "../ops/nll_loss.js";
import { checkOptions } from "../util/options.js";
import { Module } from "./module.js";

export interface NLLLossOptions {
  /** A rescaling weight per class, [C]. */
  weight?: Tensor | null;
  ignoreIndex?: number;
  reduction?: Reduction;
}

/** torch.nn.NLLLoss: log-probabilities [N, C] (or [N, C, d…]) against int32 class indices. */
export class NLLLoss extends Module {
  readonly ignoreIndex: number;
  readonly reduction: Reduction;
  /** A buffer, as in PyTorch, so that it appears in the state dict. */
  weight: Tensor | null;

  constructor(options: NLLLossOptions = {}) {
    super();
    checkOptions("NLLLoss", options, ["weight", "ignoreIndex", "reduction"]);
    this.ignoreIndex = options.ignoreIndex ?? -100;
    this.reduction = checkReduction(options.reduction ?? "mean", "NLLLoss");
    this.weight = null;
    this.registerBuffer("weight", options.weight ?? null);
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return nllLoss(input, target, { weight: this.weight, ignoreIndex: this.ignoreIndex, reduction: this.reduction });
  }

  override extraRepr(): string {
    return `ignore_index=${this.ignoreIndex}, reduction='${this.reduction}'`;
  }
}

export interface BCELossOptions {
  /** A rescaling weight broadcast against each element's loss. */
  weight?: Tensor | null;
  reduction?: Reduction;
}

/** torch.nn.BCELoss: binary cross entropy of probabilities in [0, 1]. */
export class BCELoss extends Module {
  readonly reduction: Reduction;
  weight: Tensor | null;

  constructor(options: BCELossOptions = {}) {
    super();
    checkOptions("BCELoss", options, ["weight", "reduction"]);
    this.reduction = checkReduction(options.reduction ?? "mean", "BCELoss");
    this.weight = null;
    this.registerBuffer("weight", options.weight ?? null);
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropy(input, target, { weight: this.weight, reduction: this.reduction });
  }

  override extraRepr(): string {
    return `reduction='${this.reduction}'`;
  }
}

export interface BCEWithLogitsLossOptions extends BCELossOptions {
  /** A weight on the positive examples, broadcast along the class (last) dim. */
  posWeight?: Tensor | null;
}

/** torch.nn.BCEWithLogitsLoss: sigmoid and binary cross entropy in one numerically stable step. */
export class BCEWithLogitsLoss extends Module {
  readonly reduction: Reduction;
  weight: Tensor | null;
  posWeight: Tensor | null;

  constructor(options: BCEWithLogitsLossOptions = {}) {
    super();
    checkOptions("BCEWithLogitsLoss", options, ["weight", "reduction", "posWeight"]);
    this.reduction = checkReduction(options.reduction ?? "mean", "BCEWithLogitsLoss");
    this.weight = null;
    this.posWeight = null;
    this.registerBuffer("weight", options.weight ?? null);
    this.registerBuffer("posWeight", options.posWeight ?? null);
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropyWithLogits(input, target, { weight: this.weight, posWeight: this.posWeight, reduction: this.reduction });
  }

  override extraRepr(): string {
    return `reduction='${this.reduction}'`;
  }
}
