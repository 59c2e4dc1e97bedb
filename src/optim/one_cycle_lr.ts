import { checkArity, checkOptions } from "../util/options.js";
import { LRScheduler, type AnyOptimizer } from "./lr_scheduler.js";

export interface OneCycleLROptions {
  /** Total number of steps, or give epochs and stepsPerEpoch. */
  totalSteps?: number;
  epochs?: number;
  stepsPerEpoch?: number;
  /** Fraction of the cycle spent increasing the lr. */
  pctStart?: number;
  annealStrategy?: "cos" | "linear";
  /** Cycle momentum (SGD's momentum or Adam's beta1) inversely to the lr. */
  cycleMomentum?: boolean;
  baseMomentum?: number | number[];
  maxMomentum?: number | number[];
  /** initial lr = maxLr / divFactor. */
  divFactor?: number;
  /** min lr = initial lr / finalDivFactor. */
  finalDivFactor?: number;
  threePhase?: boolean;
  lastEpoch?: number;
}

const ONE_CYCLE_OPTIONS = ["totalSteps", "epochs", "stepsPerEpoch", "pctStart", "annealStrategy", "cycleMomentum", "baseMomentum", "maxMomentum", "divFactor", "finalDivFactor", "threePhase", "lastEpoch"];

interface Phase {
  endStep: number;
  startLr: string;
  endLr: string;
  startMomentum: string;
  endMomentum: string;
}

type Group = Record<string, unknown> & { lr: number };

/**
 * The 1cycle policy (torch.optim.lr_scheduler.OneCycleLR): the lr rises from maxLr/divFactor to
 * maxLr over pctStart of the steps, then anneals to a minimum far below; momentum moves the other
 * way. Step it after every batch; stepping past totalSteps is an error, as in PyTorch.
 */
export class OneCycleLR extends LRScheduler {
  readonly totalSteps: number;
  readonly annealStrategy: "cos" | "linear";
  readonly cycleMomentum: boolean;
  private readonly useBeta1: boolean;
  private readonly phases: Phase[];

  constructor(optimizer: AnyOptimizer, maxLr: number | number[], options: OneCycleLROptions = {}) {
    checkArity("OneCycleLR", arguments, 3, "new optim.OneCycleLR(optimizer, maxLr, { totalSteps, epochs, stepsPerEpoch, pctStart, … })");
    checkOptions("OneCycleLR", options, ONE_CYCLE_OPTIONS);
    const lastEpoch = options.lastEpoch ?? -1;
    const groups = optimizer.paramGroups as Group[];
    const perGroup = (name: string, v: number | number[]): number[] => {
      if (!Array.isArray(v)) return groups.map(() => v);
      if (v.length !== groups.length) throw new RangeError(`OneCycleLR: expected ${groups.length} values for ${name} (one per group), got ${v.length}`);
      return v;
    };
    const maxLrs = perGroup("maxLr", maxLr);
    if (lastEpoch === -1) {
      groups.forEach((g, i) => {
        g.initialLr = maxLrs[i] / (options.divFactor ?? 25);
        g.maxLr = maxLrs[i];
        g.minLr = (g.initialLr as number) / (options.finalDivFactor ?? 1e4);
      });
    }
    const cycleMomentum = options.cycleMomentum ?? true;
    const useBeta1 = "betas" in optimizer.defaults;
    if (cycleMomentum) {
      if (!("momentum" in optimizer.defaults) && !useBeta1) throw new Error("OneCycleLR: the optimizer has neither momentum nor betas; pass { cycleMomentum: false }");
      const maxM = perGroup("maxMomentum", options.maxMomentum ?? 0.95);
      const baseM = perGroup("baseMomentum", options.baseMomentum ?? 0.85);
      if (lastEpoch === -1) {
        groups.forEach((g, i) => {
          if (useBeta1) g.betas = [maxM[i], (g.betas as number[])[1]];
          else g.momentum = maxM[i];
          g.maxMomentum = maxM[i];
          g.baseMomentum = baseM[i];
        });
      }
    }
    super(optimizer, lastEpoch);
    const total = options.totalSteps ?? (options.epochs !== undefined && options.stepsPerEpoch !== undefined ? options.epochs * options.stepsPerEpoch : undefined);
    if (total === undefined || !Number.isInteger(total) || total <= 0) {
      throw new RangeError(`OneCycleLR: give totalSteps, or epochs and stepsPerEpoch, as positive integers (got totalSteps=${options.totalSteps}, epochs=${options.epochs}, stepsPerEpoch=${options.stepsPerEpoch})`);
    }
    const pct = options.pctStart ?? 0.3;
    if (!(pct >= 0 && pct <= 1)) throw new RangeError(`OneCycleLR: pctStart must be in [0, 1], got ${pct}`);
    const strategy = options.annealStrategy ?? "cos";
    if (strategy !== "cos" && strategy !== "linear") throw new TypeError(`OneCycleLR: annealStrategy must be "cos" or "linear", got ${JSON.stringify(strategy)}`);
    this.totalSteps = total;
    this.annealStrategy = strategy;
    this.cycleMomentum = cycleMomentum;
    this.useBeta1 = useBeta1;
    const phase = (endStep: number, startLr: string, endLr: string, startMomentum: string, endMomentum: string): Phase => ({ endStep, startLr, endLr, startMomentum, endMomentum });
    this.phases = options.threePhase
      ? [
          phase(pct * total - 1, "initialLr", "maxLr", "maxMomentum", "baseMomentum"),
          phase(2 * pct * total - 2, "maxLr", "initialLr", "baseMomentum", "maxMomentum"),
          phase(total - 1, "initialLr", "minLr", "maxMomentum", "maxMomentum"),
        ]
      : [phase(pct * total - 1, "initialLr", "maxLr", "maxMomentum", "baseMomentum"), phase(total - 1, "maxLr", "minLr", "baseMomentum", "maxMomentum")];
    this.initialStep();
  }

  private anneal(start: number, end: number, pct: number): number {
    if (this.annealStrategy === "linear") return (end - start) * pct + start;
    return end + ((start - end) / 2) * (Math.cos(Math.PI * pct) + 1);
  }

  protected getLr(): number[] {
    const step = this.lastEpoch;
    if (step > this.totalSteps) {
      throw new Error(`OneCycleLR: tried to step ${step} times, but the schedule has totalSteps = ${this.totalSteps}`);
    }
    return (this.optimizer.paramGroups as Group[]).map((g) => {
      let start = 0;
      let lr = 0;
      let momentum = 0;
      for (let i = 0; i < this.phases.length; i++) {
        const p = this.phases[i];
        if (step <= p.endStep || i === this.phases.length - 1) {
          const pct = (step - start) / (p.endStep - start);
          lr = this.anneal(g[p.startLr] as number, g[p.endLr] as number, pct);
          if (this.cycleMomentum) momentum = this.anneal(g[p.startMomentum] as number, g[p.endMomentum] as number, pct);
          break;
        }
        start = p.endStep;
      }
      if (this.cycleMomentum) {
        if (this.useBeta1) g.betas = [momentum, (g.betas as number[])[1]];
        else g.momentum = momentum;
      }
      return lr;
    });
  }

  protected override extraState(): Record<string, unknown> {
    return { total_steps: this.totalSteps, anneal_strategy: this.annealStrategy, cycle_momentum: this.cycleMomentum, use_beta1: this.useBeta1 };
  }
}
