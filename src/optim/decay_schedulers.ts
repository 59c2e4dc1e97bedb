import { checkArity, checkOptions } from "../util/options.js";
import { LRScheduler, type AnyOptimizer } from "./lr_scheduler.js";

/** Multiplies the lr by gamma at each milestone epoch (torch.optim.lr_scheduler.MultiStepLR); a repeated milestone decays twice. */
export class MultiStepLR extends LRScheduler {
  readonly milestones: readonly number[];
  readonly gamma: number;

  constructor(optimizer: AnyOptimizer, milestones: Iterable<number>, options: { gamma?: number; lastEpoch?: number } = {}) {
    checkArity("MultiStepLR", arguments, 3, "new optim.MultiStepLR(optimizer, [milestones], { gamma, lastEpoch })");
    checkOptions("MultiStepLR", options, ["gamma", "lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    const list = milestones !== null && typeof milestones === "object" && Symbol.iterator in milestones ? [...milestones] : null;
    if (!list || list.some((m) => !Number.isInteger(m))) throw new TypeError(`MultiStepLR: milestones must be a list of integer epochs, got ${String(milestones)}`);
    this.milestones = list.sort((a, b) => a - b);
    this.gamma = options.gamma ?? 0.1;
    this.initialStep();
  }

  protected getLr(): number[] {
    const hits = this.milestones.filter((m) => m === this.lastEpoch).length;
    return this.optimizer.paramGroups.map((g) => (hits === 0 ? g.lr : g.lr * this.gamma ** hits));
  }

  protected override closedFormLr(): number[] {
    const passed = this.milestones.filter((m) => m <= this.lastEpoch).length;
    return this.baseLrs.map((b) => b * this.gamma ** passed);
  }

  protected override extraState(): Record<string, unknown> {
    const counts: Record<string, number> = {};
    for (const m of this.milestones) counts[m] = (counts[m] ?? 0) + 1;
    return { milestones: counts, gamma: this.gamma };
  }
}

/** Multiplies the lr by gamma every epoch (torch.optim.lr_scheduler.ExponentialLR). */
export class ExponentialLR extends LRScheduler {
  readonly gamma: number;

  constructor(optimizer: AnyOptimizer, gamma: number, options: { lastEpoch?: number } = {}) {
    checkArity("ExponentialLR", arguments, 3, "new optim.ExponentialLR(optimizer, gamma, { lastEpoch })");
    checkOptions("ExponentialLR", options, ["lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    if (typeof gamma !== "number" || !Number.isFinite(gamma)) throw new TypeError(`ExponentialLR: gamma must be a number, got ${String(gamma)}`);
    this.gamma = gamma;
    this.initialStep();
  }

  protected getLr(): number[] {
    const groups = this.optimizer.paramGroups;
    // The constructor's step (or a resume) keeps the lr where it is, as in PyTorch.
    if (this.isInitial) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * this.gamma);
  }

  protected override closedFormLr(): number[] {
    return this.baseLrs.map((b) => b * this.gamma ** this.lastEpoch);
  }

  protected override extraState(): Record<string, unknown> {
    return { gamma: this.gamma };
  }
}

export interface LinearLROptions {
  startFactor?: number;
  endFactor?: number;
  totalIters?: number;
  lastEpoch?: number;
}

/**
 * Scales the lr linearly from startFactor to endFactor over totalIters epochs, then keeps it
 * (torch.optim.lr_scheduler.LinearLR; defaults 1/3, 1 and 5), with PyTorch's recursive form.
 */
export class LinearLR extends LRScheduler {
  readonly startFactor: number;
  readonly endFactor: number;
  readonly totalIters: number;

  constructor(optimizer: AnyOptimizer, options: LinearLROptions = {}) {
    checkArity("LinearLR", arguments, 2, "new optim.LinearLR(optimizer, { startFactor, endFactor, totalIters, lastEpoch })");
    checkOptions("LinearLR", options, ["startFactor", "endFactor", "totalIters", "lastEpoch"]);
    super(optimizer, options.lastEpoch ?? -1);
    const start = options.startFactor ?? 1 / 3;
    const end = options.endFactor ?? 1;
    const total = options.totalIters ?? 5;
    if (!(start > 0 && start <= 1)) throw new RangeError(`LinearLR: startFactor must be in (0, 1], got ${start}`);
    if (!(end >= 0 && end <= 1)) throw new RangeError(`LinearLR: endFactor must be in [0, 1], got ${end}`);
    if (!Number.isInteger(total) || total < 1) throw new RangeError(`LinearLR: totalIters must be a positive integer, got ${total}`);
    this.startFactor = start;
    this.endFactor = end;
    this.totalIters = total;
    this.initialStep();
  }

  protected getLr(): number[] {
    const groups = this.optimizer.paramGroups;
    const { startFactor: s, endFactor: e, totalIters: n, lastEpoch: t } = this;
    if (t === 0) return groups.map((g) => g.lr * s);
    if (this.isInitial || t > n) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * (1 + (e - s) / (n * s + (t - 1) * (e - s))));
  }

  protected override closedFormLr(): number[] {
    const { startFactor: s, endFactor: e, totalIters: n, lastEpoch: t } = this;
    return this.baseLrs.map((b) => b * (s + ((e - s) * Math.min(n, t)) / n));
  }

  protected override extraState(): Record<string, unknown> {
    return { start_factor: this.startFactor, end_factor: this.endFactor, total_iters: this.totalIters };
  }
}
