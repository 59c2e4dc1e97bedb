import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { dropout } from "../ops/dropout.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";

/** Zeroes elements with probability p while training, scaling the rest by 1/(1−p) (torch.nn.Dropout). */
export class Dropout extends Module {
  readonly p: number;
  generator: Generator | undefined;

  constructor(p = 0.5, options: { generator?: Generator } = {}) {
    super();
    checkArity("Dropout", arguments, 2, "new nn.Dropout(p, { generator })");
    checkOptions("Dropout", options, ["generator"]);
    if (typeof p !== "number") throw new TypeError(`Dropout: p must be a number, got ${typeof p}; call it as new nn.Dropout(0.1)`);
    if (!(p >= 0 && p <= 1)) throw new RangeError(`Dropout: the probability p must be in [0, 1], got ${p}`);
    this.p = p;
    this.generator = options.generator;
  }

  override forward(x: Tensor): Tensor {
    return dropout(x, this.p, { training: this.training, generator: this.generator });
  }

  override extraRepr(): string {
    return `p=${this.p}`;
  }
}
