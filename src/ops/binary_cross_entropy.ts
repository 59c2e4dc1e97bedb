import { noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { formatShape, shapesEqual, broadcastShapes } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { add, clamp, div, log, minimum, mul, neg, sigmoid, sub, abs, exp } from "./elementwise.js";
import { zerosLike } from "./creation.js";
import { checkReduction } from "./nll_loss.js";
import type { Reduction } from "./loss.js";
import { mean, sum } from "./reduction.js";
import { log1p } from "./trigonometry.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData } from "./util.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export interface BinaryCrossEntropyOptions {
  /** A rescaling weight that broadcasts against the loss of each element. */
  weight?: Tensor | null;
  reduction?: Reduction;
}

export interface BinaryCrossEntropyWithLogitsOptions extends BinaryCrossEntropyOptions {
  /** A weight on the positive term, broadcast along the last (class) dim. */
  posWeight?: Tensor | null;
}

function reduce(loss: Tensor, reduction: Reduction): Tensor {
  return reduction === "none" ? loss : reduction === "sum" ? sum(loss) : mean(loss);
}

function checkPair(input: Tensor, target: Tensor, op: string): void {
  assertTensor(input, op);
  assertTensor(target, op, "target");
  assertFloating(input, op);
  assertSameDType(input, target, op);
  if (!shapesEqual(input.shape, target.shape)) {
    throw new RangeError(`${op}: the target ${formatShape(target.shape)} must have the input's shape ${formatShape(input.shape)}`);
  }
}

function checkWeight(w: Tensor | null | undefined, input: Tensor, name: string, op: string): Tensor | null {
  if (w === null || w === undefined) return null;
  assertTensor(w, op, name);
  assertSameDType(input, w, op);
  const shape = broadcastShapes(input.shape, w.shape, `${op} (${name})`);
  // PyTorch multiplies the loss by the weight in place, so the weight may not grow the loss's shape.
  if (name === "weight" && !shapesEqual(shape, input.shape)) {
    throw new RangeError(`${op}: the weight ${formatShape(w.shape)} must broadcast to the input's shape ${formatShape(input.shape)}, not grow it to ${formatShape(shape)}`);
  }
  return w;
}

/** log clamped below at −100, as PyTorch's binary_cross_entropy does, so log(0) stays finite. */
const clampedLog = (x: Tensor) => clamp(log(x), -100);

/**
 * torch.nn.functional.binary_cross_entropy: −w·(t·log x + (1−t)·log(1−x)) for probabilities x in
 * [0, 1] (each log clamped at −100). The gradients are PyTorch's: w·(x−t)/max(x(1−x), 1e-12) for
 * the input and w·(log(1−x) − log x) for the target, written with public ops.
 */
export function binaryCrossEntropy(input: Tensor, target: Tensor, options: BinaryCrossEntropyOptions = {}): Tensor {
  if (hasBFloat16(input, target, options)) return inFloat32(binaryCrossEntropy, [input, target, options]);
  const op = "binaryCrossEntropy";
  checkPair(input, target, op);
  checkOptions(op, options, ["weight", "reduction"]);
  const reduction = checkReduction(options.reduction ?? "mean", op);
  const weight = checkWeight(options.weight, input, "weight", op);
  const x = contiguousData(input);
  const xs = x.storage.data;
  for (let i = 0; i < input.numel; i++) {
    const v = xs[x.offset + i];
    if (!(v >= 0 && v <= 1)) throw new RangeError(`${op}: every input must be a probability in [0, 1], got ${v} at flat position ${i}; use binaryCrossEntropyWithLogits for logits`);
  }
  const value = (a: Tensor, t: Tensor): Tensor => neg(add(mul(t, clampedLog(a)), mul(sub(1, t), clampedLog(sub(1, a)))));
  const raw = noGrad(() => value(input, target));
  const loss = record(
    raw.detach(),
    "BinaryCrossEntropyBackward",
    [input, target],
    (g) => [
      input.requiresGrad ? div(mul(g, sub(input, target)), clamp(mul(input, sub(1, input)), 1e-12)) : null,
      target.requiresGrad ? mul(g, sub(clampedLog(sub(1, input)), clampedLog(input))) : null,
    ],
    [input, target],
  );
  // PyTorch gives the weight no gradient.
  return reduce(weight ? mul(loss, weight.detach()) : loss, reduction);
}

/**
 * log σ(x) = min(x, 0) − log1p(exp(−|x|)), exact and finite for every x. The gradient is PyTorch's
 * g·σ(−x), recorded with public ops so that the second derivative is smooth at 0 (through |x| it
 * would be lost there).
 */
export function logSigmoid(x: Tensor): Tensor {
  if (hasBFloat16(x)) return inFloat32(logSigmoid, [x]);
  assertTensor(x, "logSigmoid");
  assertFloating(x, "logSigmoid");
  const out = noGrad(() => sub(minimum(x, zerosLike(x)), log1p(exp(neg(abs(x))))));
  return record(out, "LogSigmoidBackward", [x], (g) => [mul(g, sigmoid(neg(x)))], [x]);
}

/**
 * torch.nn.functional.binary_cross_entropy_with_logits: the binary cross entropy of σ(input), as
 * PyTorch computes it: (1−t)·x − (1 + (posWeight−1)·t)·log σ(x), times the weight. Composed of
 * public ops, so input and target get gradients and double backward works.
 */
export function binaryCrossEntropyWithLogits(input: Tensor, target: Tensor, options: BinaryCrossEntropyWithLogitsOptions = {}): Tensor {
  if (hasBFloat16(input, target, options)) return inFloat32(binaryCrossEntropyWithLogits, [input, target, options]);
  const op = "binaryCrossEntropyWithLogits";
  checkPair(input, target, op);
  checkOptions(op, options, ["weight", "reduction", "posWeight"]);
  const reduction = checkReduction(options.reduction ?? "mean", op);
  const weight = checkWeight(options.weight, input, "weight", op);
  const posWeight = checkWeight(options.posWeight, input, "posWeight", op);
  const logSig = logSigmoid(input);
  // Neither weight gets a gradient (PyTorch refuses weights that require grad; ringtorch detaches them).
  const scale = posWeight ? add(mul(sub(posWeight.detach(), 1), target), 1) : null;
  let loss = sub(mul(sub(1, target), input), scale ? mul(scale, logSig) : logSig);
  if (weight) loss = mul(loss, weight.detach());
  return reduce(loss, reduction);
}
