import { zerosLike } from "../ops/creation.js";
import { checkArity, checkOptions } from "../util/options.js";
import { bumpVersion, flatData, gradData } from "./flat.js";
import { Optimizer, type ParamGroup, type Params } from "./optimizer.js";

export interface RMSpropOptions {
  lr: number;
  alpha: number;
  eps: number;
  weightDecay: number;
  momentum: number;
  centered: boolean;
  maximize: boolean;
}

const KNOWN = ["lr", "alpha", "eps", "weightDecay", "momentum", "centered", "maximize", "foreach", "capturable", "differentiable"];

/**
 * RMSprop (torch.optim.RMSprop) with PyTorch's defaults (lr 1e-2, alpha 0.99, eps 1e-8) and its
 * order of operations: eps is added after the square root, momentum accumulates grad/avg.
 * Plain loops over the parameter's elements: one pass per parameter, no temporaries.
 */
export class RMSprop extends Optimizer<RMSpropOptions> {
  constructor(params: Params<RMSpropOptions>, options: Partial<RMSpropOptions> = {}) {
    checkArity("RMSprop", arguments, 2, "new optim.RMSprop(params, { lr, alpha, eps, weightDecay, momentum, centered })");
    checkOptions("RMSprop", options, KNOWN);
    super(params, { lr: 1e-2, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false, ...withoutImplementationFlags(options) });
  }

  protected validate(g: ParamGroup<RMSpropOptions>): void {
    for (const k of ["lr", "eps", "momentum", "weightDecay", "alpha"] as const) {
      if (!(g[k] >= 0)) throw new RangeError(`RMSprop: invalid ${k} ${g[k]}; it must be a non-negative number`);
    }
  }

  protected updateGroup(g: ParamGroup<RMSpropOptions>): void {
    for (const p of g.params) {
      if (!p.grad) continue;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        state.square_avg = zerosLike(p);
        if (g.momentum > 0) state.momentum_buffer = zerosLike(p);
        if (g.centered) state.grad_avg = zerosLike(p);
      }
      state.step = (state.step as number) + 1;
      const param = flatData(p, "RMSprop");
      const grad = gradData(p, "RMSprop");
      const sq = flatData(state.square_avg as never, "RMSprop");
      const buf = g.momentum > 0 ? flatData((state.momentum_buffer ??= zerosLike(p)) as never, "RMSprop") : null;
      const gavg = g.centered ? flatData((state.grad_avg ??= zerosLike(p)) as never, "RMSprop") : null;
      const { lr, alpha, eps, weightDecay: wd, momentum, maximize } = g;
      for (let i = 0; i < param.length; i++) {
        let d = maximize ? -grad[i] : grad[i];
        if (wd !== 0) d += wd * param[i];
        sq[i] = alpha * sq[i] + (1 - alpha) * d * d;
        let v = sq[i];
        if (gavg) {
          gavg[i] += (1 - alpha) * (d - gavg[i]);
          v -= gavg[i] * gavg[i];
        }
        const avg = Math.sqrt(v) + eps;
        if (buf) {
          buf[i] = momentum * buf[i] + d / avg;
          param[i] -= lr * buf[i];
        } else param[i] -= (lr * d) / avg;
      }
      bumpVersion(p);
    }
  }
}

/** PyTorch's implementation switches (foreach, capturable, differentiable) change nothing here; they are accepted and dropped. */
export function withoutImplementationFlags<O extends object>(options: O): O {
  const out = { ...options } as Record<string, unknown>;
  for (const k of ["foreach", "capturable", "differentiable", "fused"]) delete out[k];
  return out as O;
}
