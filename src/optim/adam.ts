import { getBackend } from "../backend/index.js";
import { zerosLike } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import { bumpVersion, flatData, gradData } from "./flat.js";
import { Optimizer, type ParamGroup, type Params } from "./optimizer.js";
import { checkArity, checkOptions } from "../util/options.js";
import { withoutImplementationFlags } from "./rmsprop.js";

export interface AdamOptions {
  lr: number;
  betas: [number, number];
  eps: number;
  weightDecay: number;
  amsgrad: boolean;
  maximize: boolean;
}

const ADAM_OPTIONS = ["lr", "betas", "eps", "weightDecay", "amsgrad", "maximize", "foreach", "capturable", "differentiable", "fused"];

/**
 * Adam (torch.optim.Adam): L2 weight decay added to the gradient. Each parameter is updated by
 * one fused backend kernel (moments, bias correction and the update in a single pass).
 */
export class Adam extends Optimizer<AdamOptions> {
  constructor(params: Params<AdamOptions>, options: Partial<AdamOptions> = {}) {
    const name = new.target === Adam ? "Adam" : new.target.name;
    checkArity(name, arguments, 2, `new optim.${name}(params, { lr, betas, eps, weightDecay, amsgrad, maximize })`);
    checkOptions(name, options, ADAM_OPTIONS);
    super(params, { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: false, maximize: false, ...withoutImplementationFlags(options) });
  }

  /** AdamW decays the parameter directly instead of through the gradient. */
  protected get decoupledWeightDecay(): boolean {
    return false;
  }

  protected validate(g: ParamGroup<AdamOptions>): void {
    const name = this.constructor.name;
    if (!(g.lr >= 0)) throw new RangeError(`${name}: invalid learning rate ${g.lr}; it must be a non-negative number`);
    if (!(g.eps >= 0)) throw new RangeError(`${name}: invalid eps ${g.eps}; it must be non-negative`);
    if (!Array.isArray(g.betas) || g.betas.length !== 2) throw new TypeError(`${name}: betas must be a pair [beta1, beta2], got ${JSON.stringify(g.betas)}`);
    g.betas.forEach((b, i) => {
      if (!(b >= 0 && b < 1)) throw new RangeError(`${name}: invalid beta at index ${i}: ${b}; it must be in [0, 1)`);
    });
    if (!(g.weightDecay >= 0)) throw new RangeError(`${name}: invalid weightDecay ${g.weightDecay}; it must be non-negative`);
  }

  protected updateGroup(g: ParamGroup<AdamOptions>): void {
    const backend = getBackend();
    const name = this.constructor.name;
    for (const p of g.params) {
      if (!p.grad) continue;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        state.exp_avg = zerosLike(p);
        state.exp_avg_sq = zerosLike(p);
        if (g.amsgrad) state.max_exp_avg_sq = zerosLike(p);
      }
      const step = (state.step as number) + 1;
      state.step = step;
      const expAvg = state.exp_avg as Tensor;
      const expAvgSq = state.exp_avg_sq as Tensor;
      let maxSq = (state.max_exp_avg_sq as Tensor | undefined) ?? null;
      if (g.amsgrad && !maxSq) state.max_exp_avg_sq = maxSq = zerosLike(p);
      backend.adamStep({
        n: p.numel,
        param: flatData(p, name),
        grad: gradData(p, name),
        expAvg: flatData(expAvg, name),
        expAvgSq: flatData(expAvgSq, name),
        maxExpAvgSq: g.amsgrad && maxSq ? flatData(maxSq, name) : null,
        lr: g.lr,
        beta1: g.betas[0],
        beta2: g.betas[1],
        eps: g.eps,
        weightDecay: g.weightDecay,
        decoupled: this.decoupledWeightDecay,
        step,
        maximize: g.maximize,
      });
      bumpVersion(p, expAvg, expAvgSq, maxSq);
    }
  }
}

/**
 * AdamW (torch.optim.AdamW): Adam with decoupled weight decay, param ← param·(1 − lr·wd) before
 * the Adam update, and PyTorch's default weightDecay of 0.01.
 */
export class AdamW extends Adam {
  constructor(params: Params<AdamOptions>, options: Partial<AdamOptions> = {}) {
    checkArity("AdamW", arguments, 2, "new optim.AdamW(params, { lr, betas, eps, weightDecay, amsgrad, maximize })");
    checkOptions("AdamW", options, ADAM_OPTIONS);
    super(params, { weightDecay: 1e-2, ...options });
  }

  protected override get decoupledWeightDecay(): boolean {
    return true;
  }
}
