import type { Tensor } from "../tensor/tensor.js";
import { div, mul, sqrt, sub } from "./elementwise.js";
import { installMethods } from "./install.js";
import { mean, reductionDims, sum, type Dims } from "./reduction.js";
import { assertFloating, assertTensor } from "./util.js";
import { checkOptions } from "../util/options.js";

export interface VarianceOptions {
  /** Subtracted from the element count in the divisor: 1 (the default) is Bessel's correction. */
  correction?: number;
  /** Shorthand for correction 1 (true) or 0 (false), as PyTorch's older `unbiased` argument. */
  unbiased?: boolean;
  keepdim?: boolean;
}

declare module "../tensor/tensor.js" {
  interface Tensor {
    var(dim?: Dims, options?: VarianceOptions): Tensor;
    std(dim?: Dims, options?: VarianceOptions): Tensor;
  }
}

/**
 * torch.var: Σ (x − mean)² / max(0, N − correction) over dims (all when omitted). Composed of
 * public ops, so its gradient 2·(x − mean)/(N − correction) comes from autograd. N − correction ≤ 0
 * divides by zero and gives inf or NaN, as in PyTorch.
 */
export function variance(x: Tensor, dim?: Dims, options: VarianceOptions = {}): Tensor {
  checkOptions("var", options, ["correction", "unbiased", "keepdim"]);
  assertTensor(x, "var");
  assertFloating(x, "var");
  if (options.correction !== undefined && options.unbiased !== undefined) {
    throw new TypeError("var: pass either correction or unbiased, not both");
  }
  const correction = options.correction ?? (options.unbiased === false ? 0 : 1);
  const dims = reductionDims(dim, x.ndim, "var");
  const count = dims.reduce((n, d) => n * x.shape[d], 1);
  const centered = sub(x, mean(x, dims, true));
  return div(sum(mul(centered, centered), dims, options.keepdim ?? false), Math.max(0, count - correction));
}

/** torch.std: the square root of variance(). */
export function std(x: Tensor, dim?: Dims, options: VarianceOptions = {}): Tensor {
  checkOptions("std", options, ["correction", "unbiased", "keepdim"]);
  return sqrt(variance(x, dim, options));
}

installMethods({ var: variance, std });
