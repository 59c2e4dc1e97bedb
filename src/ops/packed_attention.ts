import type { AttentionArgs, StridedView } from "../backend/backend.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { dropoutSeeds } from "./attention.js";
import { add, mul, sub } from "./elementwise.js";
import { cat } from "./join.js";
import { isAutocastEnabled } from "./autocast.js";
import { backwardProduct } from "./matmul.js";
import { sum } from "./reduction.js";
import { softmax } from "./softmax.js";
import { contiguousData, emptyTensor } from "./util.js";
import { expand, narrow, permute, reshape, transpose } from "./view.js";

export interface PackedSelfAttentionOptions {
  /** Additive float bias broadcastable to [N, H, L, L], requiring no gradient; null for none. */
  bias?: Tensor | null;
  /** Hide later keys (not with bias). */
  isCausal?: boolean;
  dropoutP?: number;
  generator?: Generator;
}

/**
 * Self-attention over a packed projection: qkv [N, L, 3E] (q, k and v side by side in the last
 * dim, as one GEMM with MultiheadAttention's in_proj_weight gives them) → heads merged back,
 * [N, L, E]. The same arithmetic as splitting qkv into q, k, v, viewing each as [N, H, L, E/H],
 * calling scaledDotProductAttention and merging the heads (PyTorch's
 * _native_multi_head_attention takes qkv the same way); what it saves is the graph around that:
 * the fused kernel reads the heads straight out of qkv, and one node hands back d(qkv) written by
 * one strided copy, where the split path recorded a slice, a view and a permute per operand (each
 * slice's backward zero-filling a whole [N, L, 3E] or [3E, E] gradient) and a copy to merge the
 * heads. On the small Transformer of bench/dataparallel.ts this is most of the graph's nodes.
 *
 * For float32/float64 with no empty sizes: MultiheadAttention checks `packedAttentionApplies` and
 * otherwise takes the split path. Under autocast a float32 qkv has its products (forward and
 * backward) run in bfloat16 and its softmax in float32, as scaledDotProductAttention there; float64
 * stays float64 (as PyTorch's autocast leaves it).
 */
export function packedSelfAttention(qkv: Tensor, numHeads: number, options: PackedSelfAttentionOptions = {}): Tensor {
  const where = "packedSelfAttention";
  if (qkv.ndim !== 3 || qkv.shape[2] % (3 * numHeads) !== 0) {
    throw new RangeError(`${where}: qkv must be [N, L, 3·E] with E divisible by the ${numHeads} heads, got ${formatShape(qkv.shape)}`);
  }
  const [n, l, e3] = qkv.shape;
  const e = e3 / 3;
  const h = numHeads;
  const hd = e / h;
  const bias = options.bias ?? null;
  const causal = options.isCausal ?? false;
  if (bias && causal) throw new RangeError(`${where}: give bias or isCausal, not both`);
  if (bias?.requiresGrad && isGradEnabled()) throw new RangeError(`${where}: the bias takes no gradient here; use scaledDotProductAttention`);
  const p = options.dropoutP ?? 0;
  if (!(p >= 0 && p < 1)) throw new RangeError(`${where}: dropoutP must be in [0, 1), got ${p}`);
  const scale = 1 / Math.sqrt(hd);
  const lowp = isAutocastEnabled() && qkv.dtype === "float32";

  const x = contiguousData(qkv);
  let biasView: StridedView | null = null;
  if (bias) {
    const b4 = expand(bias.detach(), [n, h, l, l]);
    biasView = { data: b4.storage.data, offset: b4.offset, strides: b4.strides.slice() };
  }
  const [seedLo, seedHi] = dropoutSeeds(p, options.generator);
  const args: AttentionArgs = { n, h, l, s: l, d: hd, dv: hd, q: headOf(x, 0, hd), k: headOf(x, 1, hd), v: headOf(x, 2, hd), bias: biasView, causal, scale, dropoutP: p, seedLo, seedHi, lowPrecision: lowp };
  const backend = getBackend();
  const y = emptyTensor(qkv.dtype, [n, h, l, hd]);
  const lse = emptyTensor(qkv.dtype, [n, h, l]);
  backend.attention(args, y.storage.data, lse.storage.data);
  // The heads merged ([N, H, L, hd] read as [N, L, H, hd]): one copy, which the split path also made.
  const out = emptyTensor(qkv.dtype, [n, l, e]);
  backend.copy({ data: y.storage.data, offset: 0, strides: [h * l * hd, hd, l * hd, 1] }, [n, l, h, hd], out.storage.data, 0);

  const ctx: PackedAttentionContext = { qkv, h, bias, causal, scale, p, lowp, args, y, lse };
  return record(out, "PackedSelfAttentionBackward", [qkv], packedSelfAttentionBackward, [qkv], ctx);
}

/** What packedSelfAttention's backward reads: one object of one shape per call. */
interface PackedAttentionContext {
  qkv: Tensor;
  h: number;
  bias: Tensor | null;
  causal: boolean;
  scale: number;
  p: number;
  /** Whether the products ran in bfloat16 (autocast): the backward's do too, whatever the autocast state then. */
  lowp: boolean;
  /** The forward kernel's arguments; their q, k and v views keep qkv's contiguous data alive. */
  args: AttentionArgs;
  /** The kernel's output [N, H, L, hd] and log-sum-exp [N, H, L], which its backward reads. */
  y: Tensor;
  lse: Tensor;
}

/** Head block `block` (0 q, 1 k, 2 v) of the contiguous [N, L, 3E] qkv x over [N, H, L]: head i of row j at x[b, j, E·block + i·hd ..], strides [L·3E, hd, 3E]. */
function headOf(x: Tensor, block: number, hd: number): StridedView {
  const l = x.shape[1]!;
  const e3 = x.shape[2]!;
  return { data: x.storage.data, offset: x.offset + (block * e3) / 3, strides: [l * e3, hd, e3] };
}

/** d(qkv) from d(out): a module-level function rather than a closure (see BackwardFn). */
function packedSelfAttentionBackward(g: Tensor, c: PackedAttentionContext): Tensor[] {
  const { qkv, h, args } = c;
  if (isGradEnabled()) {
    if (c.p > 0) throw new RangeError("packedSelfAttention: double backward through attention dropout is not supported");
    return [composedGrad(qkv, g, h, c.bias, c.causal, c.scale, c.lowp)];
  }
  const [n, l, e3] = qkv.shape as [number, number, number];
  const hd = e3 / 3 / h;
  const backend = getBackend();
  // The kernel wants dout as [N, H, L, hd]; dq, dk and dv land in one [3, N, H, L, hd] buffer, so
  // that one strided copy lays them out as d(qkv) [N, L, 3, H, hd] (every element written: no fill).
  const gh = emptyTensor(qkv.dtype, [n, h, l, hd]);
  backend.copy({ data: g.storage.data, offset: g.offset, strides: [g.strides[0]!, hd * g.strides[2]!, g.strides[1]!, g.strides[2]!] }, [n, h, l, hd], gh.storage.data, 0);
  const block = n * h * l * hd;
  const d3 = emptyTensor(qkv.dtype, [3, n, h, l, hd]);
  const dd = d3.storage.data;
  backend.attentionBackward(args, c.y.storage.data, gh.storage.data, c.lse.storage.data, dd.subarray(0, block), dd.subarray(block, 2 * block), dd.subarray(2 * block));
  const dqkv = emptyTensor(qkv.dtype, [n, l, e3]);
  backend.copy({ data: dd, offset: 0, strides: [h * l * hd, hd, block, l * hd, 1] }, [n, l, 3, h, hd], dqkv.storage.data, 0);
  return [dqkv];
}

/** True where packedSelfAttention computes what the split path would (dtype, sizes). */
export function packedAttentionApplies(qkv: Tensor): boolean {
  return (qkv.dtype === "float32" || qkv.dtype === "float64") && qkv.numel > 0;
}

/**
 * d(qkv) with public ops (create_graph), so that it can be differentiated again: the attention's
 * gradient formula on q, k, v split out of qkv, the three concatenated back.
 */
function composedGrad(qkv: Tensor, g: Tensor, h: number, bias: Tensor | null, causal: boolean, scale: number, lowp: boolean): Tensor {
  const matmul = (a: Tensor, b: Tensor) => backwardProduct(a, b, lowp);
  const [n, l, e3] = qkv.shape;
  const e = e3 / 3;
  const heads = (t: Tensor) => permute(reshape(t, [n, l, h, e / h]), [0, 2, 1, 3]);
  const merge = (t: Tensor) => reshape(permute(t, [0, 2, 1, 3]), [n, l, e]);
  const [q, k, v] = [0, 1, 2].map((i) => heads(narrow(qkv, 2, i * e, e)));
  let scores = mul(matmul(q!, transpose(k!, -2, -1)), scale);
  if (bias) scores = add(scores, bias.detach());
  if (causal) scores = add(scores, causalMask(l, qkv));
  const pr = softmax(scores, -1);
  const gh = heads(g);
  const dv = matmul(transpose(pr, -2, -1), gh);
  const dp = matmul(gh, transpose(v!, -2, -1));
  const ds = mul(pr, sub(dp, sum(mul(dp, pr), -1, true)));
  return cat([merge(mul(matmul(ds, k!), scale)), merge(mul(matmul(transpose(ds, -2, -1), q!), scale)), merge(dv)], -1);
}

/** [L, L]: 0 on and below the diagonal, -Infinity above (key j hidden from query i when j > i). */
function causalMask(l: number, like: Tensor): Tensor {
  const m = emptyTensor(like.dtype, [l, l]);
  const d = m.storage.data;
  for (let i = 0; i < l; i++) for (let j = 0; j < l; j++) d[i * l + j] = j > i ? Number.NEGATIVE_INFINITY : 0;
  return m;
}
