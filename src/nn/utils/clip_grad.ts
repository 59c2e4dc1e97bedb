import { getBackend } from "../../backend/index.js";
import { noGrad } from "../../autograd/grad_mode.js";
import { scalarTensor } from "../../ops/elementwise.js";
import { contiguousData } from "../../ops/util.js";
import type { Tensor } from "../../tensor/tensor.js";
import { checkArity, checkOptions } from "../../util/options.js";

export interface ClipGradNormOptions {
  /** The p of the p-norm (2 by default; Infinity for the largest absolute value). */
  normType?: number;
  /** Throw when the total norm is NaN or infinite instead of scaling gradients by it. */
  errorIfNonfinite?: boolean;
  /** Accepted for ported code; the gradients are always processed per tensor in native passes. */
  foreach?: boolean | null;
}

function gradsOf(parameters: Iterable<Tensor> | Tensor): Tensor[] {
  const list = parameters instanceof Object && Symbol.iterator in parameters ? [...(parameters as Iterable<Tensor>)] : [parameters as Tensor];
  return list.filter((p) => p.grad !== null).map((p) => p.grad!);
}

/** The p-norm of one gradient's elements, raised to p (or the max |x| for p = ∞). */
function partialNorm(g: Tensor, p: number): number {
  const c = contiguousData(g);
  const data = c.storage.data;
  if (p === 2) return getBackend().sumSquares(data, c.offset, c.numel);
  let acc = 0;
  for (let i = c.offset, end = c.offset + c.numel; i < end; i++) {
    const a = Math.abs(data[i]);
    if (p === Infinity) acc = a > acc || Number.isNaN(a) ? a : acc;
    else acc += a ** p;
  }
  return acc;
}

/**
 * Scales all gradients together so that their combined p-norm is at most maxNorm
 * (torch.nn.utils.clip_grad_norm_), in place. Returns the total norm before clipping, a 0-d
 * float32 tensor as in PyTorch. The per-gradient sums of squares run in one native pass each.
 */
export function clipGradNorm(parameters: Iterable<Tensor> | Tensor, maxNorm: number, options: ClipGradNormOptions = {}): Tensor {
  checkArity("clipGradNorm", arguments, 3, "clipGradNorm(parameters, maxNorm, { normType, errorIfNonfinite })");
  checkOptions("clipGradNorm", options, ["normType", "errorIfNonfinite", "foreach"]);
  const p = options.normType ?? 2;
  if (!(p > 0)) throw new RangeError(`clipGradNorm: normType must be positive (or Infinity), got ${p}`);
  if (!(maxNorm >= 0)) throw new RangeError(`clipGradNorm: maxNorm must be a non-negative number, got ${maxNorm}`);
  const grads = gradsOf(parameters);
  if (grads.length === 0) return scalarTensor(0, "float32");
  return clipToTotalNorm(grads, finishNorm(normPart(grads, p), p), maxNorm, p, options.errorIfNonfinite ?? false);
}

/**
 * The gradients' share of a p-norm: the sum of |x|^p (the max |x| for p = ∞). Sharded
 * gradients combine these shares across ranks (sum, or max) before finishNorm.
 */
export function normPart(grads: readonly Tensor[], p: number): number {
  let total = 0;
  for (const g of grads) {
    const part = partialNorm(g, p);
    total = p === Infinity ? (part > total || Number.isNaN(part) ? part : total) : total + part;
  }
  return total;
}

/** The p-norm from its combined share. */
export function finishNorm(part: number, p: number): number {
  if (p === Infinity) return part;
  return p === 2 ? Math.sqrt(part) : part ** (1 / p);
}

/** Scales the gradients in place so that a total norm of `total` becomes at most maxNorm; returns the total as a 0-d tensor. */
export function clipToTotalNorm(grads: readonly Tensor[], total: number, maxNorm: number, p: number, errorIfNonfinite: boolean): Tensor {
  if (errorIfNonfinite && !Number.isFinite(total)) {
    throw new Error(
      `clipGradNorm: the total norm of order ${p} of the gradients is ${total}, so they cannot be clipped. ` +
        "Pass { errorIfNonfinite: false } to scale them anyway (they will become NaN).",
    );
  }
  const coef = maxNorm / (total + 1e-6);
  if (coef < 1 || Number.isNaN(coef)) {
    noGrad(() => {
      for (const g of grads) g.mul_(coef);
    });
  }
  return scalarTensor(total, "float32");
}

/** Clamps every gradient element into [-clipValue, clipValue], in place (torch's clip_grad_value_). */
export function clipGradValue(parameters: Iterable<Tensor> | Tensor, clipValue: number): void {
  if (!(clipValue >= 0)) throw new RangeError(`clipGradValue: clipValue must be a non-negative number, got ${clipValue}`);
  noGrad(() => {
    for (const g of gradsOf(parameters)) g.copy_(g.clamp(-clipValue, clipValue));
  });
}
