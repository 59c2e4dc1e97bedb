import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { empty } from "../ops/creation.js";
import { linear } from "../ops/linear.js";
import { narrow, permute, reshape, transpose } from "../ops/view.js";
import { scaledDotProductAttention } from "../ops/attention.js";
import { packedAttentionApplies, packedSelfAttention } from "../ops/packed_attention.js";
import { attentionBias, attentionWithWeights, averageHeads, type AttentionMasks } from "./attention.js";
import { constant_, xavierUniform_ } from "./init.js";
import { Linear } from "./linear.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";
import { checkArity, checkOptions } from "../util/options.js";

export interface MultiheadAttentionOptions {
  /** Dropout on the attention weights while training. */
  dropout?: number;
  bias?: boolean;
  /** Inputs and outputs are [batch, seq, feature] instead of PyTorch's default [seq, batch, feature]. */
  batchFirst?: boolean;
  /** Feature size of the key (default embedDim); when it or vdim differs, q, k and v get separate projection weights, as in PyTorch. */
  kdim?: number;
  /** Feature size of the value (default embedDim). */
  vdim?: number;
  dtype?: DType;
  generator?: Generator;
}

const MHA_OPTIONS = ["dropout", "bias", "batchFirst", "kdim", "vdim", "dtype", "generator"];

export interface MultiheadAttentionCallOptions extends AttentionMasks {
  /** Also return the attention weights (PyTorch's default); off saves their averaging. */
  needWeights?: boolean;
  /** Average the returned weights over heads ([N, L, S]) rather than per head ([N, H, L, S]). */
  averageAttnWeights?: boolean;
}

/**
 * torch.nn.MultiheadAttention with the packed input projection (in_proj_weight [3E, E],
 * in_proj_bias [3E]) and out_proj, named as PyTorch names them so state dicts interchange.
 */
export class MultiheadAttention extends Module {
  readonly embedDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly dropout: number;
  readonly batchFirst: boolean;
  readonly kdim: number;
  readonly vdim: number;
  /** The packed [3E, E] projection when kdim = vdim = embedDim; null otherwise (then q/k/v_proj_weight). */
  in_proj_weight: Parameter | null;
  q_proj_weight: Parameter | null;
  k_proj_weight: Parameter | null;
  v_proj_weight: Parameter | null;
  in_proj_bias: Parameter | null;
  out_proj: Linear;
  private readonly generator: Generator | undefined;

  constructor(embedDim: number, numHeads: number, options: MultiheadAttentionOptions = {}) {
    super();
    checkArity("MultiheadAttention", arguments, 3, "new nn.MultiheadAttention(embedDim, numHeads, { dropout, bias, batchFirst, kdim, vdim })");
    checkOptions("MultiheadAttention", options, MHA_OPTIONS);
    if (!Number.isInteger(embedDim) || !Number.isInteger(numHeads) || numHeads < 1 || embedDim % numHeads !== 0) {
      throw new RangeError(`MultiheadAttention: embedDim (${embedDim}) must be divisible by numHeads (${numHeads})`);
    }
    this.embedDim = embedDim;
    this.numHeads = numHeads;
    this.headDim = embedDim / numHeads;
    this.dropout = options.dropout ?? 0;
    this.batchFirst = options.batchFirst ?? false;
    this.generator = options.generator;
    const dtype = options.dtype ?? "float32";
    const bias = options.bias ?? true;
    this.kdim = options.kdim ?? embedDim;
    this.vdim = options.vdim ?? embedDim;
    for (const [name, d] of [["kdim", this.kdim], ["vdim", this.vdim]] as const) {
      if (!Number.isInteger(d) || d < 1) throw new RangeError(`MultiheadAttention: ${name} must be a positive integer, got ${d}`);
    }
    const packed = this.kdim === embedDim && this.vdim === embedDim;
    this.in_proj_weight = packed ? new Parameter(empty([3 * embedDim, embedDim], { dtype })) : null;
    this.q_proj_weight = packed ? null : new Parameter(empty([embedDim, embedDim], { dtype }));
    this.k_proj_weight = packed ? null : new Parameter(empty([embedDim, this.kdim], { dtype }));
    this.v_proj_weight = packed ? null : new Parameter(empty([embedDim, this.vdim], { dtype }));
    this.in_proj_bias = bias ? new Parameter(empty([3 * embedDim], { dtype })) : null;
    this.out_proj = new Linear(embedDim, embedDim, { bias, dtype, generator: options.generator });
    this.resetParameters();
  }

  /** PyTorch's: xavier-uniform in_proj_weight, zero biases; out_proj.weight keeps Linear's init. */
  resetParameters(): void {
    if (this.in_proj_weight) xavierUniform_(this.in_proj_weight, 1, this.generator);
    else for (const w of [this.q_proj_weight, this.k_proj_weight, this.v_proj_weight]) xavierUniform_(w!, 1, this.generator);
    if (this.in_proj_bias) constant_(this.in_proj_bias, 0);
    if (this.out_proj.bias) constant_(this.out_proj.bias, 0);
  }

  /**
   * Returns [output, weights]: output like query; weights [N, L, S] (or [N, H, L, S] without
   * averaging), or null when needWeights is false.
   */
  override forward(query: Tensor, key: Tensor, value: Tensor, options: MultiheadAttentionCallOptions = {}): [Tensor, Tensor | null] {
    checkArity("MultiheadAttention.forward", arguments, 4, "mha.call(query, key, value, { keyPaddingMask, needWeights, attnMask, averageAttnWeights, isCausal })");
    checkOptions("MultiheadAttention.forward", options, ["attnMask", "keyPaddingMask", "isCausal", "needWeights", "averageAttnWeights"]);
    const e = this.embedDim;
    for (const [t, name, d, dName] of [[query, "query", e, "embed"], [key, "key", this.kdim, "kdim"], [value, "value", this.vdim, "vdim"]] as const) {
      if (t.ndim !== 3 || t.shape[2] !== d) {
        const layout = this.batchFirst ? `[batch, seq, ${dName}]` : `[seq, batch, ${dName}]`;
        throw new RangeError(`MultiheadAttention: ${name} must be ${layout} with ${dName} = ${d}, got ${formatShape(t.shape)}`);
      }
    }
    // Work batch-first internally: [N, L, E].
    const bf = (t: Tensor) => (this.batchFirst ? t : transpose(t, 0, 1));
    const [q0, k0, v0] = [bf(query), bf(key), bf(value)];
    const [n, l] = [q0.shape[0], q0.shape[1]];
    const s = k0.shape[1];
    if (k0.shape[0] !== n || v0.shape[0] !== n || v0.shape[1] !== s) {
      throw new RangeError(`MultiheadAttention: query, key and value disagree on batch or source length: ${formatShape(query.shape)}, ${formatShape(key.shape)}, ${formatShape(value.shape)}`);
    }
    const needWeights = options.needWeights ?? true;
    const dropoutP = this.training ? this.dropout : 0;
    if (!needWeights && query === key && key === value && this.in_proj_weight && packedAttentionApplies(q0)) {
      // Self-attention: one GEMM for q, k and v, the heads read straight out of it (packed_attention.ts).
      const onlyCausal = options.isCausal === true && !options.attnMask && !options.keyPaddingMask;
      const bias = onlyCausal ? null : attentionBias(n, this.numHeads, l, s, q0.dtype, options);
      if (!bias?.requiresGrad) {
        const qkv = linear(q0, this.in_proj_weight, this.in_proj_bias);
        const out = this.out_proj.call(packedSelfAttention(qkv, this.numHeads, { bias, isCausal: onlyCausal, dropoutP, generator: this.generator }));
        return [this.batchFirst ? out : transpose(out, 0, 1), null];
      }
    }
    const [q, k, v] = this.project(q0, k0, v0);
    const heads = (t: Tensor, len: number) => permute(reshape(t, [n, len, this.numHeads, this.headDim]), [0, 2, 1, 3]);
    let output: Tensor;
    let w: Tensor | null = null;
    if (needWeights) {
      const bias = attentionBias(n, this.numHeads, l, s, q.dtype, options);
      const r = attentionWithWeights(heads(q, l), heads(k, s), heads(v, s), { bias, dropoutP, generator: this.generator });
      output = r.output;
      w = (options.averageAttnWeights ?? true) ? averageHeads(r.weights) : r.weights;
    } else {
      // The fused kernel; a lone causal flag stays a flag so that no [L, S] mask is built.
      const onlyCausal = options.isCausal === true && !options.attnMask && !options.keyPaddingMask;
      const bias = onlyCausal ? null : attentionBias(n, this.numHeads, l, s, q.dtype, options);
      output = scaledDotProductAttention(heads(q, l), heads(k, s), heads(v, s), { attnMask: bias, isCausal: onlyCausal, dropoutP, generator: this.generator });
    }
    const merged = reshape(permute(output, [0, 2, 1, 3]), [n, l, e]);
    const out = this.out_proj.call(merged);
    return [this.batchFirst ? out : transpose(out, 0, 1), w];
  }

  /**
   * q, k and v, each from its block of rows of the packed weight, where they are not one tensor or
   * the weights are wanted (self-attention without weights takes packedSelfAttention instead). Three
   * GEMMs do the work of one packed GEMM, but their gradients come back as rows of in_proj_weight
   * (contiguous blocks) instead of column slices of a [N, L, 3E] activation, whose backward
   * scatters element by element.
   */
  private project(q: Tensor, k: Tensor, v: Tensor): [Tensor, Tensor, Tensor] {
    const e = this.embedDim;
    const b = this.in_proj_bias;
    const separate = [this.q_proj_weight, this.k_proj_weight, this.v_proj_weight];
    const weight = (i: number) => (this.in_proj_weight ? narrow(this.in_proj_weight, 0, i * e, e) : separate[i]!);
    const part = (x: Tensor, i: number) => linear(x, weight(i), b ? narrow(b, 0, i * e, e) : null);
    return [part(q, 0), part(k, 1), part(v, 2)];
  }

  override extraRepr(): string {
    return `embed_dim=${this.embedDim}, num_heads=${this.numHeads}, dropout=${this.dropout}, batch_first=${this.batchFirst}`;
  }
}
