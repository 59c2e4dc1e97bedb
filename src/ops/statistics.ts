import type { Tensor } from "../tensor/tensor.js";
import { isGradEnabled, noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { checkOptions } from "../util/options.js";
import { to } from "./creation.js";
import { div, eq, mul, sqrt, sub, where } from "./elementwise.js";
import { installMethods } from "./install.js";
import { mean, reducedShape, reductionDims, sum, type Dims } from "./reduction.js";
import { assertFloating, assertTensor } from "./util.js";
import { reshape } from "./view.js";

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
 * torch.var: Σ (x − mean)² / max(0, N − correction) over dims (all when omitted). float32 input is
 * computed in float64 and rounded once, so that squares of values above ~1e19 do not overflow where
 * the variance itself fits. N − correction ≤ 0 divides by zero and gives inf or NaN, as in PyTorch.
 */
export function variance(x: Tensor, dim?: Dims, options: VarianceOptions = {}): Tensor {
  return moment(x, dim, options, "var");
}

/** torch.std: the square root of variance(); where it is 0 the gradient is 0, as PyTorch. */
export function std(x: Tensor, dim?: Dims, options: VarianceOptions = {}): Tensor {
  return moment(x, dim, options, "std");
}

function moment(x: Tensor, dim: Dims, options: VarianceOptions, op: "var" | "std"): Tensor {
  assertTensor(x, op);
  assertFloating(x, op);
  checkOptions(op, options, ["correction", "unbiased", "keepdim"]);
  if (options.correction !== undefined && options.unbiased !== undefined) {
    throw new TypeError(`${op}: pass either correction or unbiased, not both`);
  }
  const correction = options.correction ?? (options.unbiased === false ? 0 : 1);
  const keepdim = options.keepdim ?? false;
  const dims = reductionDims(dim, x.ndim, op);
  const count = dims.reduce((n, d) => n * x.shape[d], 1);
  const kept = reducedShape(x.shape, dims, true);
  const out = noGrad(() => {
    const wide = x.dtype === "float32" ? to(x, "float64") : x;
    const centered = sub(wide, mean(wide, dims, true));
    const v = div(sum(mul(centered, centered), dims, keepdim), Math.max(0, count - correction));
    return to(op === "std" ? sqrt(v) : v, x.dtype);
  });
  // PyTorch's var_backward: 2·g·(x − mean)/(N − correction), from x directly (not through the mean,
  // whose gradient is zero in exact arithmetic but NaN next to an infinity). Like PyTorch, the divisor
  // is clamped at 0 only when no dim is given (so a negative one gives -0 rather than NaN with a dim).
  const explicitDim = x.ndim > 0 && dim !== undefined && dim !== null && !(Array.isArray(dim) && dim.length === 0);
  const divisor = explicitDim ? count - correction : Math.max(0, count - correction);
  return record(
    out,
    op === "std" ? "StdBackward" : "VarBackward",
    [x],
    (g) => {
      const gk = reshape(g, kept);
      const centered = sub(x, mean(x, dims, true));
      // Reducing everything with no degrees of freedom, PyTorch returns the gradient without a graph.
      if (op === "var") return [!explicitDim && divisor === 0 ? noGrad(() => mul(mul(gk, centered), Infinity)) : mul(mul(gk, centered), 2 / divisor)];
      const s = reshape(isGradEnabled() ? moment(x, dim, options, "std") : out.detach(), kept);
      return [where(eq(s, 0), 0, div(mul(gk, centered), mul(s, divisor)))];
    },
    [x],
  );
}

installMethods({ var: variance, std });
