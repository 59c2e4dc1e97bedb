import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { full, zeros } from "../ops/creation.js";
import { hasBFloat16, inFloat32 } from "../ops/bfloat16.js";
import { add, maskedFill, mul } from "../ops/elementwise.js";
import { dropout } from "../ops/dropout.js";
import { matmul } from "../ops/matmul.js";
import { mean } from "../ops/reduction.js";
import { softmax } from "../ops/softmax.js";
import { triu } from "../ops/triangle.js";
import { reshape, transpose } from "../ops/view.js";

export interface AttentionMasks {
  /**
   * [L, S] or [N·H, L, S]: bool (true = may not attend) or float (added to the scores, -Infinity
   * to forbid), as torch's attn_mask.
   */
  attnMask?: Tensor | null;
  /** [N, S]: bool (true = padding, ignored) or float (added), as torch's key_padding_mask. */
  keyPaddingMask?: Tensor | null;
  /** Forbid attending to later positions (a causal mask), in addition to any attnMask. */
  isCausal?: boolean;
}

/** The [size, size] float mask with -Infinity above the diagonal (torch's generate_square_subsequent_mask). */
export function generateSquareSubsequentMask(size: number, dtype: DType = "float32"): Tensor {
  return triu(full([size, size], Number.NEGATIVE_INFINITY, { dtype }), 1);
}

function additive(mask: Tensor, dtype: DType): Tensor {
  if (mask.dtype === "bool") return maskedFill(zeros(mask.shape, { dtype }), mask, Number.NEGATIVE_INFINITY);
  if (mask.dtype !== dtype) throw new TypeError(`attention: a float mask must have the query's dtype ${dtype}, got ${mask.dtype}`);
  return mask;
}

/**
 * The masks merged into one additive float tensor that broadcasts over scores [N, H, L, S],
 * or null when nothing is masked. Bool masks become 0 / -Infinity, as in PyTorch.
 */
export function attentionBias(n: number, h: number, l: number, s: number, dtype: DType, masks: AttentionMasks): Tensor | null {
  let bias: Tensor | null = null;
  const { attnMask, keyPaddingMask, isCausal } = masks;
  if (attnMask) {
    let m = additive(attnMask, dtype);
    if (m.ndim === 2) {
      if (m.shape[0] !== l || m.shape[1] !== s) throw new RangeError(`attention: a 2-D attnMask must have shape [${l}, ${s}], got ${formatShape(m.shape)}`);
    } else if (m.ndim === 3) {
      if (m.shape[0] !== n * h || m.shape[1] !== l || m.shape[2] !== s) {
        throw new RangeError(`attention: a 3-D attnMask must have shape [${n * h}, ${l}, ${s}] (batch·heads, L, S), got ${formatShape(m.shape)}`);
      }
      m = reshape(m, [n, h, l, s]);
    } else throw new RangeError(`attention: attnMask must be 2-D or 3-D, got shape ${formatShape(m.shape)}`);
    bias = m;
  }
  if (isCausal) {
    const causal = generateSquareSubsequentMask(Math.max(l, s), dtype).narrow(0, 0, l).narrow(1, 0, s);
    bias = bias ? add(bias, causal) : causal;
  }
  if (keyPaddingMask) {
    if (keyPaddingMask.ndim !== 2 || keyPaddingMask.shape[0] !== n || keyPaddingMask.shape[1] !== s) {
      throw new RangeError(`attention: keyPaddingMask must have shape [${n}, ${s}] (batch, source length), got ${formatShape(keyPaddingMask.shape)}`);
    }
    const kp = reshape(additive(keyPaddingMask, dtype), [n, 1, 1, s]);
    bias = bias ? add(bias, kp) : kp;
  }
  return bias;
}

export interface AttentionOptions {
  /** Additive mask broadcastable to [N, H, L, S] (see attentionBias). */
  bias?: Tensor | null;
  dropoutP?: number;
  training?: boolean;
  generator?: Generator;
}

/**
 * softmax(q·kᵀ/√d + bias)·v for q [N, H, L, d], k and v [N, H, S, d]. Returns the output
 * [N, H, L, d] and the attention weights [N, H, L, S] (after dropout, as PyTorch returns them).
 * The scale is applied to q, as PyTorch 1.13 does, which is the smaller of q and the scores.
 * Composed from matmul and softmax because it returns the weights; without them, use the fused
 * nn.functional.scaledDotProductAttention.
 */
export function attentionWithWeights(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): { output: Tensor; weights: Tensor } {
  // bfloat16 as PyTorch's fused kernel: scores, softmax and products in float32, rounded once.
  if (hasBFloat16(q, k, v, options)) return inFloat32(attentionWithWeights, [q, k, v, options]);
  const d = q.shape[q.ndim - 1];
  let scores = matmul(mul(q, 1 / Math.sqrt(d)), transpose(k, -2, -1));
  if (options.bias) scores = add(scores, options.bias);
  let weights = softmax(scores, -1);
  const p = options.dropoutP ?? 0;
  if (p > 0 && options.training !== false) weights = dropout(weights, p, { training: true, generator: options.generator });
  return { output: matmul(weights, v), weights };
}

/** Averages attention weights [N, H, L, S] over heads, giving [N, L, S]. */
export function averageHeads(weights: Tensor): Tensor {
  return mean(weights, 1);
}
