import type { MatmulArgs } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { Tensor } from "../tensor/tensor.js";
import { lowPrecisionProduct } from "./autocast.js";
import { crossEntropyGradComposed, crossEntropyGradRows, crossEntropyRows, reducedLoss, rowScale, type FusedReduction } from "./cross_entropy_fused.js";
import { linear } from "./linear.js";
import { checkTargets, crossEntropy } from "./loss.js";
import { matmul } from "./matmul.js";
import { contiguousData, emptyTensor } from "./util.js";
import { transpose } from "./view.js";
import { checkOptions } from "../util/options.js";

export interface LinearCrossEntropyOptions {
  ignoreIndex?: number;
  labelSmoothing?: number;
  reduction?: FusedReduction;
  /** Rows of the logits' gradient made at a time in backward (default: 32 MB of them). */
  blockRows?: number;
}

/** Elements of the gradient block backward makes at a time: 32 MB of float32. */
const CHUNK_ELEMENTS = 1 << 23;

/**
 * A language-model head and its loss: logits = h·Wᵀ (h [N, d], W [V, d]) and
 * crossEntropy(logits, target). The logits are an ordinary linear output; the loss is recorded as
 * a function of h and W directly, and its backward never makes the [N, V] gradient of the logits:
 * it writes softmax − target for a block of rows at a time into one buffer and multiplies each
 * block into dh and dW at once. For GPT-2's 50257-token vocabulary that [N, V] buffer was the
 * largest tensor of a training step. Other dtypes (bfloat16 weights) take linear + crossEntropy.
 */
export function linearCrossEntropy(h: Tensor, weight: Tensor, target: Tensor, options: LinearCrossEntropyOptions = {}): { logits: Tensor; loss: Tensor } {
  checkOptions("linearCrossEntropy", options, ["ignoreIndex", "labelSmoothing", "reduction", "blockRows"]);
  const ignoreIndex = options.ignoreIndex ?? -100;
  const smoothing = options.labelSmoothing ?? 0;
  const reduction = options.reduction ?? "mean";
  const logits = linear(h, weight);
  const fused =
    h.ndim === 2 && weight.ndim === 2 && target.ndim === 1 && target.dtype === "int32" && target.shape[0] === h.shape[0] &&
    h.dtype === weight.dtype && (h.dtype === "float32" || h.dtype === "float64") && logits.dtype === h.dtype;
  if (!fused) return { logits, loss: crossEntropy(logits, target, { ignoreIndex, labelSmoothing: smoothing, reduction }) };
  if (options.blockRows !== undefined && !(Number.isInteger(options.blockRows) && options.blockRows > 0)) {
    throw new RangeError(`linearCrossEntropy: blockRows must be a positive integer, got ${options.blockRows}`);
  }
  if (!(smoothing >= 0 && smoothing <= 1)) throw new RangeError(`linearCrossEntropy: labelSmoothing must be in [0, 1], got ${smoothing}`);
  const n = h.shape[0];
  const v = weight.shape[0];
  checkTargets(target, v, ignoreIndex);
  const ce = crossEntropyRows(logits, n, v, target, ignoreIndex, smoothing, reduction);
  const lowp = lowPrecisionProduct(h, weight);
  const loss = record(
    reducedLoss(ce, target.shape),
    "LinearCrossEntropyBackward",
    [h, weight],
    (g) => {
      if (isGradEnabled()) {
        // Double backward: the same gradient with public ops, a function of h, W and g.
        const gl = crossEntropyGradComposed(ce, linear(h, weight), g);
        return [h.requiresGrad ? matmul(gl, weight) : null, weight.requiresGrad ? matmul(transpose(gl, 0, 1), h) : null];
      }
      return blockedBackward(ce, rowScale(ce, g), contiguousData(h), contiguousData(weight), h.requiresGrad, weight.requiresGrad, lowp, options.blockRows);
    },
    [h, weight, logits],
  );
  return { logits, loss };
}

/** dh = G·W and dW = Gᵀ·h for G = the logits' gradient, made a block of rows at a time. */
function blockedBackward(
  ce: ReturnType<typeof crossEntropyRows>,
  scale: Tensor,
  h: Tensor,
  w: Tensor,
  wantH: boolean,
  wantW: boolean,
  lowp: boolean,
  blockRows: number | undefined,
): [Tensor | null, Tensor | null] {
  const { rows: n, cols: v } = ce;
  const d = h.shape[1];
  const backend = getBackend();
  const gemm = (args: MatmulArgs) => (lowp ? backend.matmulBf16(args) : backend.matmul(args));
  const dh = wantH ? emptyTensor(h.dtype, [n, d]) : null;
  const dw = wantW ? emptyTensor(w.dtype, [v, d]) : null;
  const chunk = Math.max(1, Math.min(n, blockRows ?? Math.floor(CHUNK_ELEMENTS / Math.max(1, v))));
  const block = emptyTensor(ce.x.dtype, [chunk, v]);
  const g = block.storage.data;
  let wroteW = false;
  for (let r0 = 0; r0 < n; r0 += chunk) {
    const r1 = Math.min(n, r0 + chunk);
    const c = r1 - r0;
    if (!ce.valid.subarray(r0, r1).includes(1)) {
      // Rows that carry no loss (padding, the last position) have a zero gradient.
      if (dh) backend.fill(dh.storage.data, r0 * d, c * d, 0);
      continue;
    }
    crossEntropyGradRows(ce, scale, r0, r1, block);
    const common = { batch: 1, aBatchStride: 0, bBatchStride: 0, alpha: 1 };
    if (dh) {
      gemm({ ...common, m: c, n: d, k: v, a: g, aOffset: 0, aRowStride: v, aColStride: 1, b: w.storage.data, bOffset: w.offset, bRowStride: d, bColStride: 1, out: dh.storage.data, outOffset: r0 * d, beta: 0 });
    }
    if (dw) {
      gemm({ ...common, m: v, n: d, k: c, a: g, aOffset: 0, aRowStride: 1, aColStride: v, b: h.storage.data, bOffset: h.offset + r0 * d, bRowStride: d, bColStride: 1, out: dw.storage.data, outOffset: 0, beta: wroteW ? 1 : 0 });
      wroteW = true;
    }
  }
  if (dw && !wroteW) backend.fill(dw.storage.data, 0, v * d, 0);
  return [dh, dw];
}
