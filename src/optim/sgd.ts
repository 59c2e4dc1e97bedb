import { getBackend } from "../backend/index.js";
import { zerosLike } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import { bumpVersion, flatData, gradData } from "./flat.js";
import { Optimizer, type ParamGroup, type Params } from "./optimizer.js";
import { checkArity, checkOptions } from "../util/options.js";
import { withoutImplementationFlags } from "./rmsprop.js";

export interface SGDOptions {
  lr: number;
  momentum: number;
  dampening: number;
  weightDecay: number;
  nesterov: boolean;
  maximize: boolean;
}

/**
 * Stochastic gradient descent with optional momentum, Nesterov momentum and weight decay
 * (torch.optim.SGD). Each parameter is updated by one fused backend kernel.
 */
export class SGD extends Optimizer<SGDOptions> {
  constructor(params: Params<SGDOptions>, options: Partial<SGDOptions> & { lr: number }) {
    checkArity("SGD", arguments, 2, "new optim.SGD(params, { lr, momentum, dampening, weightDecay, nesterov, maximize })");
    checkOptions("SGD", options, ["lr", "momentum", "dampening", "weightDecay", "nesterov", "maximize", "foreach", "differentiable", "fused"]);
    if (options?.lr === undefined) throw new TypeError("SGD: a learning rate is required, e.g. new SGD(model.parameters(), { lr: 0.1 })");
    super(params, { momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false, ...withoutImplementationFlags(options) });
  }

  protected validate(g: ParamGroup<SGDOptions>): void {
    if (!(g.lr >= 0)) throw new RangeError(`SGD: invalid learning rate ${g.lr}; it must be a non-negative number`);
    if (!(g.momentum >= 0)) throw new RangeError(`SGD: invalid momentum ${g.momentum}; it must be non-negative`);
    if (!(g.weightDecay >= 0)) throw new RangeError(`SGD: invalid weightDecay ${g.weightDecay}; it must be non-negative`);
    if (g.nesterov && (g.momentum <= 0 || g.dampening !== 0)) throw new RangeError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0");
  }

  protected updateGroup(g: ParamGroup<SGDOptions>): void {
    const backend = getBackend();
    for (const p of g.params) {
      if (!p.grad) continue;
      const state = this.stateOf(p);
      let buffer: Tensor | null = null;
      let firstStep = false;
      if (g.momentum !== 0) {
        buffer = (state.momentum_buffer as Tensor | null | undefined) ?? null;
        if (!buffer) {
          state.momentum_buffer = buffer = zerosLike(p);
          firstStep = true;
        }
      }
      backend.sgdStep({
        n: p.numel,
        param: flatData(p, "SGD"),
        grad: gradData(p, "SGD"),
        momentumBuffer: buffer ? flatData(buffer, "SGD") : null,
        firstStep,
        lr: g.lr,
        momentum: g.momentum,
        dampening: g.dampening,
        nesterov: g.nesterov,
        weightDecay: g.weightDecay,
        maximize: g.maximize,
      });
      bumpVersion(p, buffer);
    }
  }
}
