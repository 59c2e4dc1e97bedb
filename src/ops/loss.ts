import { autocastFloat32 } from "./autocast.js";
import { broadcastShapes, formatShape, shapesEqual } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { add, div, mul, ne, neg, sub, where } from "./elementwise.js";
import { fusedCrossEntropy } from "./cross_entropy_fused.js";
import { gather } from "./gather.js";
import { indexSelect } from "./indexing.js";
import { mean, sum } from "./reduction.js";
import { logSoftmax } from "./softmax.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData } from "./util.js";
import { reshape, squeeze, unsqueeze } from "./view.js";
import { checkArity, checkOptions } from "../util/options.js";
import { hasBFloat16, hasBFloat16OutsideAutocast, inFloat32 } from "./bfloat16.js";

export type Reduction = "mean" | "sum" | "none";

export interface CrossEntropyOptions {
  /** A manual rescaling weight per class, of shape [C]. */
  weight?: Tensor | null;
  /** Targets equal to this class index contribute nothing (indices targets only). */
  ignoreIndex?: number;
  reduction?: Reduction;
  /** Mixes the target with the uniform distribution: (1 − ε)·target + ε/C. */
  labelSmoothing?: number;
}

function checkReduction(reduction: string, op: string): Reduction {
  if (reduction !== "mean" && reduction !== "sum" && reduction !== "none") {
    throw new TypeError(`${op}: reduction must be "mean", "sum" or "none", got ${JSON.stringify(reduction)}`);
  }
  return reduction;
}

/**
 * torch.nn.functional.cross_entropy for logits [N, C] (or [C], or [N, C, d1, …]) against class
 * indices ([N], [], [N, d1, …], int32) or class probabilities (the logits' shape, float).
 * Composed of logSoftmax, gather and arithmetic, so autograd supplies the gradient.
 */
export function crossEntropy(input: Tensor, target: Tensor, options: CrossEntropyOptions = {}): Tensor {
  if (hasBFloat16OutsideAutocast(input, target, options)) return inFloat32(crossEntropy, [input, target, options]);
  checkArity("crossEntropy", arguments, 3, "crossEntropy(input, target, { weight, ignoreIndex, reduction, labelSmoothing })");
  checkOptions("crossEntropy", options, ["weight", "ignoreIndex", "reduction", "labelSmoothing"]);
  assertTensor(input, "crossEntropy");
  assertTensor(target, "crossEntropy", "target");
  [input, target] = [autocastFloat32(input), autocastFloat32(target)];
  assertFloating(input, "crossEntropy");
  const reduction = checkReduction(options.reduction ?? "mean", "crossEntropy");
  const smoothing = options.labelSmoothing ?? 0;
  if (!(smoothing >= 0 && smoothing <= 1)) throw new RangeError(`crossEntropy: labelSmoothing must be in [0, 1], got ${smoothing}`);
  if (input.ndim === 0) throw new RangeError("crossEntropy: the input needs a class dim, got a 0-d tensor");
  const classDim = input.ndim === 1 ? 0 : 1;
  const classes = input.shape[classDim];
  const weight = options.weight ?? null;
  if (weight) {
    assertSameDType(input, weight, "crossEntropy");
    if (weight.ndim !== 1 || weight.shape[0] !== classes) {
      throw new RangeError(`crossEntropy: the weight must have shape [${classes}] (one per class), got ${formatShape(weight.shape)}`);
    }
  }
  // The weight broadcast against the class dim of the input.
  const classWeight = weight ? reshape(weight, input.shape.map((s, i) => (i === classDim ? s : 1))) : null;
  if (target.dtype === "float32" || target.dtype === "float64" || target.dtype === "bfloat16") {
    const indexShape = input.shape.filter((_, i) => i !== classDim);
    if (!shapesEqual(target.shape, input.shape) && shapesEqual(target.shape, indexShape)) {
      // tensor([3, 1, 4]) is float32 here (JavaScript numbers carry no int/float distinction), so this is the porter's usual slip.
      throw new TypeError(
        `crossEntropy: the target has the shape of class indices ${formatShape(target.shape)} but dtype ${target.dtype}; index targets must be int32: ` +
          `make them with tensor(labels, { dtype: "int32" }) or convert with target.int() (float targets are class probabilities of the input's shape ${formatShape(input.shape)})`,
      );
    }
    if (options.ignoreIndex !== undefined && options.ignoreIndex !== -100) {
      throw new TypeError(`crossEntropy: ignoreIndex (${options.ignoreIndex}) is not supported with class-probability (float) targets`);
    }
    if (!shapesEqual(target.shape, input.shape)) {
      throw new RangeError(`crossEntropy: class-probability targets must have the input's shape ${formatShape(input.shape)}, got ${formatShape(target.shape)}`);
    }
    const logp = logSoftmax(input, classDim);
    let probs = to(target, input.dtype);
    if (smoothing > 0) probs = add(mul(probs, 1 - smoothing), smoothing / classes);
    const weighted = classWeight ? mul(probs, classWeight) : probs;
    const loss = neg(sum(mul(logp, weighted), classDim));
    if (reduction === "none") return loss;
    // The mean is over the batch elements, whatever the weights (as PyTorch).
    return reduction === "sum" ? sum(loss) : mean(loss);
  }

  if (target.dtype !== "int32") throw new TypeError(`crossEntropy: the target must be int32 class indices or float probabilities, got ${target.dtype}`);
  const expected = input.shape.filter((_, i) => i !== classDim);
  if (!shapesEqual(target.shape, expected)) {
    throw new RangeError(`crossEntropy: for logits of shape ${formatShape(input.shape)} the target must have shape ${formatShape(expected)}, got ${formatShape(target.shape)}`);
  }
  const ignoreIndex = options.ignoreIndex ?? -100;
  checkTargets(target, classes, ignoreIndex);
  if (!weight && input.ndim <= 2 && (input.dtype === "float32" || input.dtype === "float64")) {
    return fusedCrossEntropy(input, target, ignoreIndex, smoothing, reduction);
  }
  const logp = logSoftmax(input, classDim);
  const valid = ne(target, ignoreIndex);
  const safeTarget = where(valid, target, 0);
  const picked = squeeze(gather(logp, classDim, unsqueeze(safeTarget, classDim)), classDim);
  const targetWeight = weight ? reshape(indexSelect(weight, 0, reshape(safeTarget, [safeTarget.numel])), target.shape) : null;
  let nll = where(valid, neg(targetWeight ? mul(picked, targetWeight) : picked), 0);
  // PyTorch's mean divides by the total weight of the counted targets, not by their number.
  const denominator = (): Tensor => sum(targetWeight ? where(valid, targetWeight, 0) : to(valid, input.dtype));
  const reduce = (perElement: Tensor, divisor: () => Tensor): Tensor =>
    reduction === "none" ? perElement : reduction === "sum" ? sum(perElement) : div(sum(perElement), divisor());
  nll = reduce(nll, denominator);
  if (smoothing === 0) return nll;
  const smooth = where(valid, neg(sum(classWeight ? mul(logp, classWeight) : logp, classDim)), 0);
  return add(mul(nll, 1 - smoothing), mul(reduce(smooth, denominator), smoothing / classes));
}

/** Every target is a class index in [0, C) or the ignore index. */
export function checkTargets(target: Tensor, classes: number, ignoreIndex: number): void {
  const c = contiguousData(target);
  const values = c.storage.data.subarray(c.offset, c.offset + target.numel);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== ignoreIndex && (v < 0 || v >= classes)) {
      throw new RangeError(`crossEntropy: target ${v} (at flat position ${i}) is not a class index in [0, ${classes}) nor the ignoreIndex ${ignoreIndex}`);
    }
  }
}

/** torch.nn.functional.mse_loss: (input − target)², reduced by mean (default), sum, or none. */
export function mseLoss(input: Tensor, target: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  if (hasBFloat16(input, target, options)) return inFloat32(mseLoss, [input, target, options]);
  checkArity("mseLoss", arguments, 3, "mseLoss(input, target, { reduction })");
  checkOptions("mseLoss", options, ["reduction"]);
  assertTensor(input, "mseLoss");
  assertTensor(target, "mseLoss", "target");
  assertFloating(input, "mseLoss");
  const reduction = checkReduction(options.reduction ?? "mean", "mseLoss");
  // Different shapes broadcast, as PyTorch does (with a warning there: it is rarely meant).
  broadcastShapes(input.shape, target.shape, "mseLoss");
  const d = sub(input, target);
  const sq = mul(d, d);
  return reduction === "none" ? sq : reduction === "sum" ? sum(sq) : mean(sq);
}
