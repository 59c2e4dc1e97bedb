import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { Tensor } from "../tensor/tensor.js";
import { tensor } from "./creation.js";
import { mul, sub } from "./elementwise.js";
import { softmax } from "./softmax.js";
import { contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";

export type FusedReduction = "mean" | "sum" | "none";

/** The forward of a fused cross-entropy over [rows, cols] logits, and what its backward needs. */
export interface CrossEntropyRows {
  /** The logits, contiguous (the caller's tensor when it already was). */
  x: Tensor;
  rows: number;
  cols: number;
  /** The targets, contiguous int32. */
  t: Tensor;
  ignoreIndex: number;
  smoothing: number;
  reduction: FusedReduction;
  /** Each row's loss (0 where ignored). */
  perRow: Tensor;
  /** Each row's max and log Σ exp(x − max), interleaved. */
  stats: Tensor;
  /** 1 for a counted row, 0 for an ignored one. */
  valid: Uint8Array;
  count: number;
}

/** Runs the backend's fused cross-entropy over the rows of x [rows, cols] (targets already checked). */
export function crossEntropyRows(input: Tensor, rows: number, cols: number, target: Tensor, ignoreIndex: number, smoothing: number, reduction: FusedReduction): CrossEntropyRows {
  const x = contiguousData(input);
  const t = contiguousData(target);
  const targets = t.storage.data as Int32Array;
  const perRow = emptyTensor(input.dtype, [rows]);
  const stats = emptyTensor(input.dtype, [2 * rows]);
  getBackend().crossEntropy(x.storage.data, x.offset, rows, cols, targets, t.offset, ignoreIndex, smoothing, perRow.storage.data, stats.storage.data);
  const valid = new Uint8Array(rows);
  let count = 0;
  for (let r = 0; r < rows; r++) {
    const v = targets[t.offset + r];
    if (v !== ignoreIndex && v >= 0 && v < cols) (valid[r] = 1), count++;
  }
  return { x, rows, cols, t, ignoreIndex, smoothing, reduction, perRow, stats, valid, count };
}

/** The reduced loss (a new tensor, not recorded). PyTorch's mean divides by the counted rows: 0/0 is NaN, as there. */
export function reducedLoss(ce: CrossEntropyRows, targetShape: readonly number[]): Tensor {
  if (ce.reduction === "none") return reshape(ce.perRow, targetShape);
  const losses = ce.perRow.storage.data;
  let total = 0;
  for (let r = 0; r < ce.rows; r++) total += losses[r];
  return tensor([ce.reduction === "sum" ? total : total / ce.count], { dtype: ce.x.dtype, shape: [] });
}

/** Each row's share of the upstream gradient g of the reduced loss (0 for ignored rows). */
export function rowScale(ce: CrossEntropyRows, g: Tensor): Tensor {
  const gc = contiguousData(g);
  const gd = gc.storage.data;
  const s = new Float64Array(ce.rows);
  for (let r = 0; r < ce.rows; r++) {
    if (!ce.valid[r]) continue;
    s[r] = ce.reduction === "none" ? gd[gc.offset + r] : ce.reduction === "sum" ? gd[gc.offset] : gd[gc.offset] / ce.count;
  }
  return tensor(s, { dtype: ce.x.dtype, shape: [ce.rows] });
}

/** The logits' gradient for rows [r0, r1) into out [r1 - r0, cols] (contiguous, at offset 0). */
export function crossEntropyGradRows(ce: CrossEntropyRows, scale: Tensor, r0: number, r1: number, out: Tensor): void {
  const { x, t, cols } = ce;
  getBackend().crossEntropyBackward(
    x.storage.data,
    x.offset + r0 * cols,
    r1 - r0,
    cols,
    t.storage.data as Int32Array,
    t.offset + r0,
    ce.ignoreIndex,
    ce.smoothing,
    ce.stats.storage.data.subarray(2 * r0, 2 * r1),
    scale.storage.data.subarray(r0, r1),
    out.storage.data,
  );
}

/**
 * The logits' gradient with public ops, as a function of `logits` [rows, cols] and g, for double
 * backward: (softmax(logits) − ((1 − ε)·onehot + ε/C))·share.
 */
export function crossEntropyGradComposed(ce: CrossEntropyRows, logits: Tensor, g: Tensor): Tensor {
  const { rows, cols, smoothing } = ce;
  const targets = ce.t.storage.data;
  const dist = new Float64Array(rows * cols);
  const maskValues = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    dist.fill(smoothing / cols, r * cols, (r + 1) * cols);
    // mean's 1/count folds into the mask, so ignored rows get 0 even when every row is (0/0 would be NaN).
    if (ce.valid[r]) (dist[r * cols + targets[ce.t.offset + r]] += 1 - smoothing), (maskValues[r] = ce.reduction === "mean" ? 1 / ce.count : 1);
  }
  const dtype = ce.x.dtype;
  const mask = tensor(maskValues, { dtype, shape: [rows, 1] });
  const share = ce.reduction === "none" ? mul(reshape(g, [rows, 1]), mask) : mul(g, mask);
  return mul(sub(softmax(logits, 1), tensor(dist, { dtype, shape: [rows, cols] })), share);
}

/**
 * crossEntropy of logits [N, C] (or [C]) against int32 class indices [N] (or []), without class
 * weights: one backend kernel writes each row's loss and log-sum-exp, and the backward writes the
 * logits' gradient softmax − target in one pass. The composed form (logSoftmax, gather, where) kept
 * the log-probabilities and made three more buffers of the logits' size in backward, which for a
 * language model's [tokens, vocabulary] logits cost more than the vocabulary projection's GEMM.
 * Targets are already checked (each a class index or ignoreIndex).
 */
export function fusedCrossEntropy(input: Tensor, target: Tensor, ignoreIndex: number, smoothing: number, reduction: FusedReduction): Tensor {
  const cols = input.shape[input.ndim - 1];
  const rows = input.ndim === 1 ? 1 : input.shape[0];
  const ce = crossEntropyRows(input, rows, cols, target, ignoreIndex, smoothing, reduction);
  return record(
    reducedLoss(ce, target.shape),
    "CrossEntropyBackward",
    [input],
    (g) => {
      if (isGradEnabled()) return [reshape(crossEntropyGradComposed(ce, reshape(input, [rows, cols]), g), input.shape)];
      const gx = emptyTensor(input.dtype, input.shape);
      crossEntropyGradRows(ce, rowScale(ce, g), 0, rows, gx);
      return [gx];
    },
    [input],
  );
}
