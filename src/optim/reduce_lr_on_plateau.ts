import { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import type { AnyOptimizer } from "./lr_scheduler.js";

export interface ReduceLROnPlateauOptions {
  mode?: "min" | "max";
  factor?: number;
  patience?: number;
  threshold?: number;
  thresholdMode?: "rel" | "abs";
  cooldown?: number;
  minLr?: number | number[];
  eps?: number;
}

const KNOWN = ["mode", "factor", "patience", "threshold", "thresholdMode", "cooldown", "minLr", "eps"];

/**
 * Cuts the lr by `factor` when a metric has stopped improving for `patience` epochs
 * (torch.optim.lr_scheduler.ReduceLROnPlateau, same defaults). Call `step(valLoss)` once per
 * epoch; the metric may be a number or a 0-d tensor.
 */
export class ReduceLROnPlateau {
  readonly optimizer: AnyOptimizer;
  readonly mode: "min" | "max";
  readonly factor: number;
  readonly patience: number;
  readonly threshold: number;
  readonly thresholdMode: "rel" | "abs";
  readonly cooldown: number;
  readonly eps: number;
  minLrs: number[];
  best: number;
  numBadEpochs = 0;
  cooldownCounter = 0;
  lastEpoch = 0;
  private lastLr: number[];

  constructor(optimizer: AnyOptimizer, options: ReduceLROnPlateauOptions = {}) {
    checkArity("ReduceLROnPlateau", arguments, 2, "new optim.ReduceLROnPlateau(optimizer, { mode, factor, patience, threshold, … })");
    checkOptions("ReduceLROnPlateau", options, KNOWN);
    if (!optimizer || !Array.isArray(optimizer.paramGroups)) throw new TypeError("ReduceLROnPlateau: expected an Optimizer");
    this.optimizer = optimizer;
    this.mode = options.mode ?? "min";
    this.thresholdMode = options.thresholdMode ?? "rel";
    if (this.mode !== "min" && this.mode !== "max") throw new TypeError(`ReduceLROnPlateau: mode must be "min" or "max", got ${JSON.stringify(this.mode)}`);
    if (this.thresholdMode !== "rel" && this.thresholdMode !== "abs") throw new TypeError(`ReduceLROnPlateau: thresholdMode must be "rel" or "abs", got ${JSON.stringify(this.thresholdMode)}`);
    this.factor = options.factor ?? 0.1;
    if (!(this.factor < 1)) throw new RangeError(`ReduceLROnPlateau: factor must be < 1, got ${this.factor}`);
    this.patience = options.patience ?? 10;
    this.threshold = options.threshold ?? 1e-4;
    this.cooldown = options.cooldown ?? 0;
    this.eps = options.eps ?? 1e-8;
    const n = optimizer.paramGroups.length;
    const minLr = options.minLr ?? 0;
    if (Array.isArray(minLr) && minLr.length !== n) throw new RangeError(`ReduceLROnPlateau: expected ${n} minLr values (one per group), got ${minLr.length}`);
    this.minLrs = Array.isArray(minLr) ? [...minLr] : Array.from({ length: n }, () => minLr);
    this.best = this.worst();
    this.lastLr = optimizer.paramGroups.map((g) => g.lr);
  }

  private worst(): number {
    return this.mode === "min" ? Infinity : -Infinity;
  }

  private isBetter(a: number, best: number): boolean {
    const t = this.threshold;
    if (this.mode === "min") return this.thresholdMode === "rel" ? a < best * (1 - t) : a < best - t;
    return this.thresholdMode === "rel" ? a > best * (t + 1) : a > best + t;
  }

  /** Records this epoch's metric; reduces the lr after more than `patience` epochs without improvement. */
  step(metric: number | Tensor): void {
    checkArity("ReduceLROnPlateau.step", arguments, 1, "scheduler.step(valLoss)");
    const current = metric instanceof Tensor ? metric.item() : metric;
    if (typeof current !== "number") throw new TypeError(`ReduceLROnPlateau.step: expected the metric (a number or a 0-d tensor), got ${typeof metric}`);
    this.lastEpoch++;
    if (this.isBetter(current, this.best)) {
      this.best = current;
      this.numBadEpochs = 0;
    } else this.numBadEpochs++;
    if (this.cooldownCounter > 0) {
      this.cooldownCounter--;
      this.numBadEpochs = 0;
    }
    if (this.numBadEpochs > this.patience) {
      this.optimizer.paramGroups.forEach((g, i) => {
        const newLr = Math.max(g.lr * this.factor, this.minLrs[i]);
        if (g.lr - newLr > this.eps) g.lr = newLr;
      });
      this.cooldownCounter = this.cooldown;
      this.numBadEpochs = 0;
    }
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  getLastLr(): number[] {
    return [...this.lastLr];
  }

  /** PyTorch's keys for the progress (best, counters, last_epoch); the settings are the constructor's. */
  stateDict(): Record<string, unknown> {
    return {
      best: this.best,
      num_bad_epochs: this.numBadEpochs,
      cooldown_counter: this.cooldownCounter,
      last_epoch: this.lastEpoch,
      min_lrs: [...this.minLrs],
      _last_lr: [...this.lastLr],
      mode: this.mode,
      factor: this.factor,
      patience: this.patience,
      threshold: this.threshold,
      threshold_mode: this.thresholdMode,
      cooldown: this.cooldown,
      eps: this.eps,
    };
  }

  loadStateDict(state: Record<string, unknown>): void {
    if (!state || typeof state !== "object" || typeof state.num_bad_epochs !== "number") {
      throw new TypeError("ReduceLROnPlateau.loadStateDict: expected an object from stateDict()");
    }
    // JSON has no Infinity: a best of null means no metric was seen yet.
    this.best = typeof state.best === "number" ? state.best : this.worst();
    this.numBadEpochs = state.num_bad_epochs;
    this.cooldownCounter = Number(state.cooldown_counter ?? 0);
    this.lastEpoch = Number(state.last_epoch ?? 0);
    if (Array.isArray(state.min_lrs)) this.minLrs = [...(state.min_lrs as number[])];
    if (Array.isArray(state._last_lr)) this.lastLr = [...(state._last_lr as number[])];
  }
}
