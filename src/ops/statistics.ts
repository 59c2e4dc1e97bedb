import type { Tensor } from "../tensor/tensor.js";
import { isGradEnabled, noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { checkOptions } from "../util/options.js";
import { to } from "./creation.js";
import { amax, amin } from "./amax.js";
import { abs, div, eq, logicalAnd, mul, sqrt, sub, where } from "./elementwise.js";
import { isfinite } from "./nonfinite.js";
import { installMethods } from "./install.js";
import { mean, reducedShape, reductionDims, sum, type Dims } from "./reduction.js";
import { assertFloating, assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

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
  if (hasBFloat16(x, dim, options)) return inFloat32(variance, [x, dim, options]);
  return moment(x, dim, options, "var");
}

/** torch.std: the square root of variance(); where it is 0 the gradient is 0, as PyTorch. */
export function std(x: Tensor, dim?: Dims, options: VarianceOptions = {}): Tensor {
  if (hasBFloat16(x, dim, options)) return inFloat32(std, [x, dim, options]);
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
    // As PyTorch on the CPU: reducing every dimension longer than 1, two passes in float64 around the
    // mean taken in the input's dtype; otherwise Welford's update, which gives exactly 0 for equal
    // finite values where two passes may leave ~1e-17 (that std's backward would divide by).
    const all = x.shape.every((s, d) => s === 1 || dims.includes(d));
    const centered = sub(wide, all ? to(mean(x, dims, true), wide.dtype) : mean(wide, dims, true));
    let v = div(sum(mul(centered, centered), dims, keepdim), Math.max(0, count - correction));
    if (!all && count > 0) v = where(logicalAnd(eq(amax(wide, dims, keepdim), amin(wide, dims, keepdim)), isfinite(amax(abs(wide), dims, keepdim))), mul(v, 0), v);
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
      // The mean in float64, rounded once: equal float32 values then centre to exactly 0 (as PyTorch's
      // cascade sum gives), where a float32 mean of many equal values can be off by an ulp and a
      // negative divisor would turn that ulp into ±1e13.
      const centered = sub(x, x.dtype === "float32" ? to(mean(to(x, "float64"), dims, true), "float32") : mean(x, dims, true));
      // Reducing everything with no degrees of freedom, PyTorch returns the gradient without a graph.
      // With no degrees of freedom, PyTorch's var_backward is g·(x == mean ? NaN : ∞): the sign is g's alone.
      if (op === "var") return [!explicitDim && divisor <= 0 ? noGrad(() => mul(gk, where(eq(x, mean(x, dims, true)), NaN, Infinity))) : mul(mul(gk, centered), 2 / divisor)];
      // PyTorch's std_backward: g/(2·std), 0 where std is 0, then var's backward. Masking before the
      // multiplication by (x − mean) keeps the double backward finite there (g·c/(std·N) would give 0/0).
      const s = reshape(isGradEnabled() ? moment(x, dim, options, "std") : out.detach(), kept);
      const gradVar = where(eq(s, 0), 0, div(gk, mul(s, 2)));
      return [mul(mul(gradVar, centered), 2 / divisor)];
    },
    [x],
  );
}

installMethods({ var: variance, std });
