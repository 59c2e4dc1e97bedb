import { checkArity, checkOptions } from "../util/options.js";
import { LRScheduler, pyMod, type AnyOptimizer } from "./lr_scheduler.js";

/** Multiplies the learning rate by gamma every stepSize steps (torch.optim.lr_scheduler.StepLR). */
export class StepLR extends LRScheduler {
  readonly stepSize: number;
  readonly gamma: number;

  constructor(optimizer: AnyOptimizer, stepSize: number, options: { gamma?: number; lastEpoch?: number } = {}) {
    checkArity("StepLR", arguments, 3, "new optim.StepLR(optimizer, stepSize, { gamma, lastEpoch })");
    checkOptions("StepLR", options, ["gamma", "lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    if (!Number.isInteger(stepSize) || stepSize < 1) throw new RangeError(`StepLR: stepSize must be a positive integer, got ${stepSize}`);
    this.stepSize = stepSize;
    this.gamma = options.gamma ?? 0.1;
    this.initialStep();
  }

  protected getLr(): number[] {
    const groups = this.optimizer.paramGroups;
    if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * this.gamma);
  }

  protected override closedFormLr(): number[] {
    return this.baseLrs.map((b) => b * this.gamma ** Math.floor(this.lastEpoch / this.stepSize));
  }

  protected override extraState(): Record<string, unknown> {
    return { step_size: this.stepSize, gamma: this.gamma };
  }
}

export type LrLambda = (step: number) => number;

/** lr = initial lr × lambda(step), one lambda for all groups or one per group (torch's LambdaLR). */
export class LambdaLR extends LRScheduler {
  readonly lrLambdas: LrLambda[];

  constructor(optimizer: AnyOptimizer, lrLambda: LrLambda | LrLambda[], options: { lastEpoch?: number } = {}) {
    checkArity("LambdaLR", arguments, 3, "new optim.LambdaLR(optimizer, lrLambda, { lastEpoch })");
    checkOptions("LambdaLR", options, ["lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    const n = optimizer.paramGroups.length;
    if (Array.isArray(lrLambda) && lrLambda.length !== n) throw new RangeError(`LambdaLR: expected ${n} lambdas (one per param group), got ${lrLambda.length}`);
    this.lrLambdas = Array.isArray(lrLambda) ? [...lrLambda] : Array.from({ length: n }, () => lrLambda);
    this.lrLambdas.forEach((f, i) => {
      if (typeof f !== "function") throw new TypeError(`LambdaLR: lambda ${i} is not a function`);
    });
    this.initialStep();
  }

  protected getLr(): number[] {
    return this.baseLrs.map((base, i) => base * this.lrLambdas[i](this.lastEpoch));
  }
}

/**
 * Cosine annealing from the initial lr to etaMin over tMax steps (torch's CosineAnnealingLR), with
 * PyTorch's recursive form so that values match it step for step and an lr changed by hand is
 * annealed from where it is.
 */
export class CosineAnnealingLR extends LRScheduler {
  readonly tMax: number;
  readonly etaMin: number;

  constructor(optimizer: AnyOptimizer, tMax: number, options: { etaMin?: number; lastEpoch?: number } = {}) {
    checkArity("CosineAnnealingLR", arguments, 3, "new optim.CosineAnnealingLR(optimizer, tMax, { etaMin, lastEpoch })");
    checkOptions("CosineAnnealingLR", options, ["etaMin", "lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    if (!(tMax > 0)) throw new RangeError(`CosineAnnealingLR: tMax must be positive, got ${tMax}`);
    this.tMax = tMax;
    this.etaMin = options.etaMin ?? 0;
    this.initialStep();
  }

  protected getLr(): number[] {
    const { tMax: T, etaMin, lastEpoch: e } = this;
    const groups = this.optimizer.paramGroups;
    if (e === 0) return groups.map((g) => g.lr);
    if (this.stepCount === 1 && e > 0) return this.baseLrs.map((b) => etaMin + ((b - etaMin) * (1 + Math.cos((e * Math.PI) / T))) / 2);
    if (pyMod(e - 1 - T, 2 * T) === 0) return groups.map((g, i) => g.lr + ((this.baseLrs[i] - etaMin) * (1 - Math.cos(Math.PI / T))) / 2);
    return groups.map((g) => ((1 + Math.cos((Math.PI * e) / T)) / (1 + Math.cos((Math.PI * (e - 1)) / T))) * (g.lr - etaMin) + etaMin);
  }

  protected override closedFormLr(): number[] {
    return this.baseLrs.map((b) => this.etaMin + ((b - this.etaMin) * (1 + Math.cos((Math.PI * this.lastEpoch) / this.tMax))) / 2);
  }

  protected override extraState(): Record<string, unknown> {
    return { T_max: this.tMax, eta_min: this.etaMin };
  }
}
