import type { AttentionArgs, StridedView } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { defaultGenerator, type Generator } from "../tensor/random.js";
import { broadcastShapes, formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import { add, mul, sub, where as whereOp } from "./elementwise.js";
import { backwardProduct, matmul } from "./matmul.js";
import { sum } from "./reduction.js";
import { softmax } from "./softmax.js";
import { triu } from "./triangle.js";
import { full, to, zeros } from "./creation.js";
import { assertFloating, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";
import { isAutocastEnabled } from "./autocast.js";
import { contiguous, expand, reshape, transpose } from "./view.js";

export interface ScaledDotProductAttentionOptions {
  /**
   * Broadcastable to [..., L, S]: bool (true = may attend, as torch's SDPA) or float (added to
   * the scores, -Infinity forbids). Receives no gradient.
   */
  attnMask?: Tensor | null;
  /** Hide later keys (key j from query i when j > i, top-left aligned as torch). Not with attnMask. */
  isCausal?: boolean;
  /** Dropout on the attention probabilities; applied whenever > 0, as torch's functional form. */
  dropoutP?: number;
  /** Multiplies q·kᵀ; default 1/√E. */
  scale?: number | null;
  /** Draws the dropout seed (default: the global generator). */
  generator?: Generator;
}

const SDPA_OPTIONS = ["attnMask", "isCausal", "dropoutP", "scale", "generator"];

/** [n, h, row] strides of a 4-D view whose last axis is contiguous. */
function headView(t: Tensor): StridedView {
  return { data: t.storage.data, offset: t.offset, strides: [t.strides[0], t.strides[1], t.strides[2]] };
}

/** A 4-D operand with a unit feature stride and non-negative strides, copying only when needed. */
function kernelReady(t: Tensor): Tensor {
  const ok = (t.strides[3] === 1 || t.shape[3] <= 1) && t.strides.every((s) => s >= 0);
  return ok ? t : contiguous(t);
}

/** The composed reference: softmax(scale·q·kᵀ + bias)·v with public ops (double backward, edge sizes). */
function composed(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | null, scale: number): Tensor {
  let scores = matmul(mul(q, scale), transpose(k, -2, -1));
  if (bias) scores = add(scores, bias);
  return matmul(softmax(scores, -1), v);
}

function causalBias(l: number, s: number, dtype: Tensor["dtype"]): Tensor {
  return triu(full([l, s], Number.NEGATIVE_INFINITY, { dtype }), 1);
}

/**
 * torch.nn.functional.scaled_dot_product_attention on a fused native kernel: q [..., L, E],
 * k [..., S, E], v [..., S, Ev] with equal leading (batch, head) dims; returns [..., L, Ev]. The
 * scores are produced one tile of keys at a time with an online softmax, so memory stays linear in
 * the sequence length; the backward recomputes them from the saved row log-sum-exps. A fully
 * masked row gives NaN, as the composed softmax does.
 */
export function scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor, options: ScaledDotProductAttentionOptions = {}): Tensor {
  checkArity("scaledDotProductAttention", arguments, 4, "scaledDotProductAttention(q, k, v, { attnMask, isCausal, dropoutP, scale })");
  checkOptions("scaledDotProductAttention", options, SDPA_OPTIONS);
  const where = "scaledDotProductAttention";
  // Under autocast the two products (and the backward's) run on the bfloat16 GEMM, float32 or
  // bfloat16 operands alike, and the result is float32 as autocast's other products.
  const lowp = isAutocastEnabled() && [q, k, v].every((t) => t?.dtype === "float32" || t?.dtype === "bfloat16");
  if (lowp && hasBFloat16(q, k, v, options)) {
    const wide = (t: Tensor) => (t.dtype === "bfloat16" ? to(t, "float32") : t);
    const mask = options.attnMask;
    return scaledDotProductAttention(wide(q), wide(k), wide(v), { ...options, attnMask: mask && mask.dtype === "bfloat16" ? wide(mask) : mask });
  }
  // bfloat16 as PyTorch's CPU kernel: widened to float32, computed, rounded once.
  if (hasBFloat16(q, k, v, options)) return inFloat32(scaledDotProductAttention, [q, k, v, options]);
  for (const [t, name] of [[q, "q"], [k, "k"], [v, "v"]] as const) {
    assertTensor(t, where, name);
    assertFloating(t, where);
    if (t.ndim < 2) throw new RangeError(`${where}: ${name} must have at least 2 dims ([..., seq, features]), got ${formatShape(t.shape)}`);
    if (t.dtype !== q.dtype) throw new TypeError(`${where}: q, k and v must share a dtype, got ${q.dtype}, ${k.dtype}, ${v.dtype}`);
  }
  const batch = q.shape.slice(0, -2);
  const sameBatch = (t: Tensor) => t.ndim === q.ndim && t.shape.slice(0, -2).every((d, i) => d === batch[i]);
  if (!sameBatch(k) || !sameBatch(v) || k.shape[k.ndim - 1] !== q.shape[q.ndim - 1] || v.shape[v.ndim - 2] !== k.shape[k.ndim - 2]) {
    throw new RangeError(`${where}: expected q [..., L, E], k [..., S, E], v [..., S, Ev] with the same leading dims, got ${formatShape(q.shape)}, ${formatShape(k.shape)}, ${formatShape(v.shape)}`);
  }
  const [l, e] = q.shape.slice(-2);
  const s = k.shape[k.ndim - 2];
  const ev = v.shape[v.ndim - 1];
  const scale = options.scale ?? 1 / Math.sqrt(e);
  if (!Number.isFinite(scale)) throw new RangeError(`${where}: scale must be a finite number, got ${options.scale}`);
  const p = options.dropoutP ?? 0;
  if (!(p >= 0 && p < 1)) throw new RangeError(`${where}: dropoutP must be in [0, 1), got ${p}`);
  const causal = options.isCausal ?? false;
  const mask = options.attnMask ?? null;
  if (mask && causal) throw new RangeError(`${where}: give attnMask or isCausal, not both (as torch)`);

  let bias: Tensor | null = null;
  if (mask) {
    assertTensor(mask, where, "attnMask");
    const scoreShape = [...batch, l, s];
    let ok = mask.ndim <= scoreShape.length;
    try {
      ok = ok && broadcastShapes(mask.shape, scoreShape, where).every((d, i) => d === scoreShape[i]);
    } catch {
      ok = false;
    }
    if (!ok) throw new RangeError(`${where}: attnMask ${formatShape(mask.shape)} does not broadcast to the scores' shape ${formatShape(scoreShape)}`);
    if (mask.dtype === "bool") bias = whereOp(mask, zeros([], { dtype: q.dtype }), full([], Number.NEGATIVE_INFINITY, { dtype: q.dtype }));
    else if (mask.dtype !== q.dtype) throw new TypeError(`${where}: a float attnMask must have q's dtype ${q.dtype}, got ${mask.dtype}`);
    else bias = mask;
  }

  const edge = l === 0 || s === 0 || e === 0 || ev === 0;
  const biasNeedsGrad = bias !== null && bias.requiresGrad && isGradEnabled();
  if (edge || biasNeedsGrad) {
    if (p > 0) throw new RangeError(`${where}: dropout needs the fused kernel, which takes no gradient for attnMask and no empty sizes`);
    const b = causal ? causalBias(l, s, q.dtype) : bias;
    return composed(q, k, v, b, scale);
  }

  // The kernel sees [N, H, rows, features]: leading dims fold into N·H (views where they can).
  const to4 = (t: Tensor) => (t.ndim === 4 ? t : t.ndim === 2 ? reshape(t, [1, 1, ...t.shape]) : t.ndim === 3 ? reshape(t, [t.shape[0], 1, t.shape[1], t.shape[2]]) : reshape(t, [-1, 1, ...t.shape.slice(-2)]));
  const [q4, k4, v4] = [q, k, v].map((t) => kernelReady(to4(t)));
  const [n, h] = [q4.shape[0], q4.shape[1]];
  let biasView: StridedView | null = null;
  if (bias) {
    const b4 = to4(expand(bias.detach(), [...batch, l, s]));
    biasView = { data: b4.storage.data, offset: b4.offset, strides: b4.strides.slice() };
  }
  const [seedLo, seedHi] = dropoutSeeds(p, options.generator);
  const args: AttentionArgs = { n, h, l, s, d: e, dv: ev, q: headView(q4), k: headView(k4), v: headView(v4), bias: biasView, causal, scale, dropoutP: p, seedLo, seedHi, lowPrecision: lowp };
  const out = emptyTensor(q.dtype, [n, h, l, ev]);
  const lse = emptyTensor(q.dtype, [n, h, l]);
  getBackend().attention(args, out.storage.data, lse.storage.data);
  const y = out.detach();
  const result = record(
    out,
    "ScaledDotProductAttentionBackward",
    [q4, k4, v4],
    (g) => {
      if (isGradEnabled()) {
        // create_graph: the same gradient through public ops, so that it can be differentiated again.
        if (p > 0) throw new RangeError(`${where}: double backward through attention dropout is not supported`);
        const b = causal ? causalBias(l, s, q.dtype) : bias ? to4(expand(bias.detach(), [...batch, l, s])) : null;
        // The products in the forward's precision, whatever the autocast state now.
        const product = (x: Tensor, y: Tensor) => backwardProduct(x, y, lowp);
        let scores = mul(product(q4, transpose(k4, -2, -1)), scale);
        if (b) scores = add(scores, b);
        const pr = softmax(scores, -1);
        const dv = product(transpose(pr, -2, -1), g);
        const dp = product(g, transpose(v4, -2, -1));
        const ds = mul(pr, sub(dp, sum(mul(dp, pr), -1, true)));
        return [mul(product(ds, k4), scale), mul(product(transpose(ds, -2, -1), q4), scale), dv];
      }
      const gd = contiguousData(g);
      const dq = emptyTensor(q.dtype, [n, h, l, e]);
      const dk = emptyTensor(q.dtype, [n, h, s, e]);
      const dv = emptyTensor(q.dtype, [n, h, s, ev]);
      getBackend().attentionBackward(args, y.storage.data, gd.storage.data.subarray(gd.offset), lse.storage.data, dq.storage.data, dk.storage.data, dv.storage.data);
      return [dq, dk, dv];
    },
    [q4, k4, v4],
  );
  return q.ndim === 4 ? result : reshape(result, [...batch, l, ev]);
}

/** The fused kernel's dropout seed, drawn from the generator (default: the global one) only when it drops. */
export function dropoutSeeds(p: number, generator: Generator | undefined): [lo: number, hi: number] {
  if (p <= 0) return [0, 0];
  const gen = generator ?? defaultGenerator;
  const lo = gen.nextUint32();
  return [lo, gen.nextUint32()];
}
