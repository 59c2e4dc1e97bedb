import { formatShape, shapesEqual } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { to } from "./creation.js";
import { add, div, mul, ne, neg, where } from "./elementwise.js";
import { gather } from "./gather.js";
import { indexSelect } from "./indexing.js";
import type { Reduction } from "./loss.js";
import { sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData } from "./util.js";
import { reshape, squeeze, unsqueeze } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export interface NllLossOptions {
  /** A rescaling weight per class, of shape [C]. */
  weight?: Tensor | null;
  /** Targets equal to this value contribute nothing, to the sum or to the mean's divisor. */
  ignoreIndex?: number;
  reduction?: Reduction;
}

export function checkReduction(reduction: unknown, op: string): Reduction {
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none") {
    throw new TypeError(`${op}: reduction must be "mean", "sum" or "none", got ${JSON.stringify(reduction)}`);
  }
  return reduction;
}

/**
 * torch.nn.functional.nll_loss: −weight[t]·input[n, t] for log-probabilities input [N, C] (or [C],
 * or [N, C, d1, …]) and int32 class indices target [N] (or [], or [N, d1, …]). The mean divides
 * by the summed weight of the targets that are not ignored (NaN when all are). Composed of gather
 * and arithmetic, so autograd gives the gradient; the weight gets none, as in PyTorch.
 */
export function nllLoss(input: Tensor, target: Tensor, options: NllLossOptions = {}): Tensor {
  if (hasBFloat16(input, target, options)) return inFloat32(nllLoss, [input, target, options]);
  const op = "nllLoss";
  assertTensor(input, op);
  assertTensor(target, op, "target");
  checkOptions(op, options, ["weight", "ignoreIndex", "reduction"]);
  assertFloating(input, op);
  const reduction = checkReduction(options.reduction ?? "mean", op);
  const ignoreIndex = options.ignoreIndex ?? -100;
  if (!Number.isInteger(ignoreIndex)) throw new TypeError(`${op}: ignoreIndex must be an integer, got ${ignoreIndex}`);
  if (input.ndim === 0) throw new RangeError(`${op}: the input needs a class dim, got a 0-d tensor`);
  if (target.dtype !== "int32") {
    throw new TypeError(`${op}: the target must hold int32 class indices, got ${target.dtype} ${formatShape(target.shape)}; convert with .int()`);
  }
  const classDim = input.ndim === 1 ? 0 : 1;
  const classes = input.shape[classDim];
  const expected = input.shape.filter((_, i) => i !== classDim);
  if (!shapesEqual(target.shape, expected)) {
    throw new RangeError(`${op}: for an input of shape ${formatShape(input.shape)} the target must have shape ${formatShape(expected)}, got ${formatShape(target.shape)}`);
  }
  const weight = options.weight ?? null;
  if (weight) {
    assertTensor(weight, op, "weight");
    assertSameDType(input, weight, op);
    if (weight.ndim !== 1 || weight.shape[0] !== classes) {
      throw new RangeError(`${op}: the weight must have shape [${classes}] (one per class), got ${formatShape(weight.shape)}`);
    }
  }
  checkClassTargets(target, classes, ignoreIndex, op);
  const valid = ne(target, ignoreIndex);
  const safeTarget = where(valid, target, 0);
  const picked = squeeze(gather(input, classDim, unsqueeze(safeTarget, classDim)), classDim);
  const targetWeight = weight ? reshape(indexSelect(weight.detach(), 0, reshape(safeTarget, [safeTarget.numel])), target.shape) : null;
  const w = targetWeight ? where(valid, targetWeight, 0) : to(valid, input.dtype);
  // Ignored targets give exactly 0 (not 0·inf = NaN next to an infinite input), as in PyTorch.
  const loss = where(valid, neg(mul(picked, w)), 0);
  if (reduction === "none") return loss;
  if (reduction === "sum") return sum(loss);
  const total = sum(w);
  // Every target ignored: the mean is 0/0 = NaN, and PyTorch's backward writes no gradient (0),
  // where dividing by the zero total would spread NaN into it.
  if (total.item() === 0) return add(mul(sum(loss), 0), NaN);
  return div(sum(loss), total);
}

/** Every target is a class index in [0, C) or the ignore index. */
export function checkClassTargets(target: Tensor, classes: number, ignoreIndex: number, op: string): void {
  const c = contiguousData(target);
  const values = c.storage.data.subarray(c.offset, c.offset + target.numel);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== ignoreIndex && (v < 0 || v >= classes)) {
      throw new RangeError(`${op}: target ${v} (at flat position ${i}) is not a class index in [0, ${classes}) nor the ignoreIndex ${ignoreIndex}`);
    }
  }
}
