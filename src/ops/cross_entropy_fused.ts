import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { Tensor } from "../tensor/tensor.js";
import { tensor } from "./creation.js";
import { div, mul, sub } from "./elementwise.js";
import { softmax } from "./softmax.js";
import { contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";

export type FusedReduction = "mean" | "sum" | "none";

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
  const x = contiguousData(input);
  const t = contiguousData(target);
  const targets = t.storage.data as Int32Array;
  const perRow = emptyTensor(input.dtype, [rows]);
  const stats = emptyTensor(input.dtype, [2 * rows]);
  const backend = getBackend();
  backend.crossEntropy(x.storage.data, x.offset, rows, cols, targets, t.offset, ignoreIndex, smoothing, perRow.storage.data, stats.storage.data);
  const valid = new Uint8Array(rows);
  let count = 0;
  for (let r = 0; r < rows; r++) {
    const v = targets[t.offset + r];
    if (v !== ignoreIndex && v >= 0 && v < cols) (valid[r] = 1), count++;
  }
  let out: Tensor;
  if (reduction === "none") {
    out = reshape(perRow, target.shape);
  } else {
    const losses = perRow.storage.data;
    let total = 0;
    for (let r = 0; r < rows; r++) total += losses[r];
    // PyTorch's mean divides by the number of counted targets: 0/0 (all ignored) is NaN, as there.
    out = tensor([reduction === "sum" ? total : total / count], { dtype: input.dtype, shape: [] });
  }
  return record(
    out,
    "CrossEntropyBackward",
    [input],
    (g) => {
      // Each row's share of the upstream gradient; ignored rows get none.
      const perRowGrad = (gv: (r: number) => number): Float64Array => {
        const s = new Float64Array(rows);
        for (let r = 0; r < rows; r++) s[r] = valid[r] ? gv(r) : 0;
        return s;
      };
      if (!isGradEnabled()) {
        const gc = contiguousData(g);
        const gd = gc.storage.data;
        const scaleValues =
          reduction === "none" ? perRowGrad((r) => gd[gc.offset + r]) : perRowGrad(() => (reduction === "sum" ? gd[gc.offset] : gd[gc.offset] / count));
        const scale = tensor(scaleValues, { dtype: input.dtype, shape: [rows] });
        const gx = emptyTensor(input.dtype, input.shape);
        backend.crossEntropyBackward(x.storage.data, x.offset, rows, cols, targets, t.offset, ignoreIndex, smoothing, stats.storage.data, scale.storage.data, gx.storage.data);
        return [gx];
      }
      // Double backward: the same formula with public ops, so that it is a function of x and g.
      const dist = new Float64Array(rows * cols);
      for (let r = 0; r < rows; r++) {
        dist.fill(smoothing / cols, r * cols, (r + 1) * cols);
        if (valid[r]) dist[r * cols + targets[t.offset + r]] += 1 - smoothing;
      }
      const mask = tensor(perRowGrad(() => 1), { dtype: input.dtype, shape: [rows, 1] });
      const share = reduction === "none" ? mul(reshape(g, [rows, 1]), mask) : reduction === "sum" ? mul(g, mask) : div(mul(g, mask), count);
      const p = softmax(reshape(input, [rows, cols]), 1);
      return [reshape(mul(sub(p, tensor(dist, { dtype: input.dtype, shape: [rows, cols] })), share), input.shape)];
    },
    [input],
  );
}
