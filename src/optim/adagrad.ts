import { full } from "../ops/creation.js";
import { checkArity, checkOptions } from "../util/options.js";
import { bumpVersion, flatData, gradData } from "./flat.js";
import { Optimizer, type ParamGroup, type Params } from "./optimizer.js";
import { withoutImplementationFlags } from "./rmsprop.js";

export interface AdagradOptions {
  lr: number;
  lrDecay: number;
  weightDecay: number;
  initialAccumulatorValue: number;
  eps: number;
  maximize: boolean;
}

const KNOWN = ["lr", "lrDecay", "weightDecay", "initialAccumulatorValue", "eps", "maximize", "foreach", "differentiable", "fused"];

/**
 * Adagrad (torch.optim.Adagrad) with PyTorch's defaults (lr 1e-2, eps 1e-10). As in PyTorch, each
 * parameter's `sum` state is created at construction, filled with initialAccumulatorValue.
 */
export class Adagrad extends Optimizer<AdagradOptions> {
  constructor(params: Params<AdagradOptions>, options: Partial<AdagradOptions> = {}) {
    checkArity("Adagrad", arguments, 2, "new optim.Adagrad(params, { lr, lrDecay, weightDecay, initialAccumulatorValue, eps })");
    checkOptions("Adagrad", options, KNOWN);
    super(params, { lr: 1e-2, lrDecay: 0, weightDecay: 0, initialAccumulatorValue: 0, eps: 1e-10, maximize: false, ...withoutImplementationFlags(options) });
    for (const g of this.paramGroups) {
      for (const p of g.params) {
        const state = this.stateOf(p);
        state.step = 0;
        state.sum = full(p.shape, g.initialAccumulatorValue, { dtype: p.dtype });
      }
    }
  }

  protected validate(g: ParamGroup<AdagradOptions>): void {
    for (const k of ["lr", "lrDecay", "weightDecay", "initialAccumulatorValue", "eps"] as const) {
      if (!(g[k] >= 0)) throw new RangeError(`Adagrad: invalid ${k} ${g[k]}; it must be a non-negative number`);
    }
  }

  protected updateGroup(g: ParamGroup<AdagradOptions>): void {
    for (const p of g.params) {
      if (!p.grad) continue;
      const state = this.stateOf(p);
      if (state.sum === undefined) state.sum = full(p.shape, g.initialAccumulatorValue, { dtype: p.dtype });
      const step = ((state.step as number | undefined) ?? 0) + 1;
      state.step = step;
      const param = flatData(p, "Adagrad");
      const grad = gradData(p, "Adagrad");
      const sum = flatData(state.sum as never, "Adagrad");
      const { weightDecay: wd, eps, maximize } = g;
      const clr = g.lr / (1 + (step - 1) * g.lrDecay);
      for (let i = 0; i < param.length; i++) {
        let d = maximize ? -grad[i] : grad[i];
        if (wd !== 0) d += wd * param[i];
        sum[i] += d * d;
        param[i] -= (clr * d) / (Math.sqrt(sum[i]) + eps);
      }
      bumpVersion(p);
    }
  }
}
