import type { Tensor } from "../tensor/tensor.js";
import { add } from "../ops/elementwise.js";
import { ModuleList } from "./containers.js";
import { Dropout } from "./dropout.js";
import { LayerNorm } from "./layer_norm.js";
import { Linear } from "./linear.js";
import { Module } from "./module.js";
import { MultiheadAttention } from "./multihead_attention.js";
import { checkOptions } from "../util/options.js";
import { applyActivation, checkLayerArguments, checkStackArguments, cloneLayers, resolveActivation, type TransformerLayerOptions } from "./transformer_common.js";

export interface EncoderCallOptions {
  /** The attention mask over source positions: [S, S] or [N·H, S, S], bool or additive float. */
  srcMask?: Tensor | null;
  /** [N, S]: true (or -Infinity) at padding positions. */
  srcKeyPaddingMask?: Tensor | null;
  /** Apply a causal mask (PyTorch 2's is_causal). */
  isCausal?: boolean;
}

/**
 * Self-attention then a feed-forward block, each with a residual connection, post-norm by default
 * or pre-norm with normFirst (torch.nn.TransformerEncoderLayer; the same member names).
 */
export class TransformerEncoderLayer extends Module {
  self_attn: MultiheadAttention;
  linear1: Linear;
  dropout: Dropout;
  linear2: Linear;
  readonly normFirst: boolean;
  norm1: LayerNorm;
  norm2: LayerNorm;
  dropout1: Dropout;
  dropout2: Dropout;
  activation: ((x: Tensor) => Tensor) | Module;

  constructor(dModel: number, nhead: number, options: TransformerLayerOptions = {}) {
    super();
    checkLayerArguments("TransformerEncoderLayer", arguments, options);
    const p = options.dropout ?? 0.1;
    const ff = options.dimFeedforward ?? 2048;
    const common = { bias: options.bias ?? true, dtype: options.dtype, generator: options.generator };
    const norm = { eps: options.layerNormEps ?? 1e-5, bias: options.bias ?? true, dtype: options.dtype };
    this.self_attn = new MultiheadAttention(dModel, nhead, { dropout: p, batchFirst: options.batchFirst ?? false, ...common });
    this.linear1 = new Linear(dModel, ff, common);
    this.dropout = new Dropout(p, { generator: options.generator });
    this.linear2 = new Linear(ff, dModel, common);
    this.normFirst = options.normFirst ?? false;
    this.norm1 = new LayerNorm(dModel, norm);
    this.norm2 = new LayerNorm(dModel, norm);
    this.dropout1 = new Dropout(p, { generator: options.generator });
    this.dropout2 = new Dropout(p, { generator: options.generator });
    this.activation = resolveActivation(options.activation);
  }

  override forward(src: Tensor, options: EncoderCallOptions = {}): Tensor {
    checkOptions("TransformerEncoderLayer.forward", options, ["srcMask", "srcKeyPaddingMask", "isCausal"]);
    let x = src;
    if (this.normFirst) {
      x = add(x, this.selfAttentionBlock(this.norm1.call(x), options));
      x = add(x, this.feedForwardBlock(this.norm2.call(x)));
    } else {
      x = this.norm1.call(add(x, this.selfAttentionBlock(x, options)));
      x = this.norm2.call(add(x, this.feedForwardBlock(x)));
    }
    return x;
  }

  private selfAttentionBlock(x: Tensor, options: EncoderCallOptions): Tensor {
    const [out] = this.self_attn.call(x, x, x, {
      attnMask: options.srcMask,
      keyPaddingMask: options.srcKeyPaddingMask,
      isCausal: options.isCausal,
      needWeights: false,
    });
    return this.dropout1.call(out);
  }

  private feedForwardBlock(x: Tensor): Tensor {
    return this.dropout2.call(this.linear2.call(this.dropout.call(applyActivation(this.activation, this.linear1.call(x)))));
  }
}

/** numLayers copies of an encoder layer (identical initial weights, as in PyTorch) and an optional final norm. */
export class TransformerEncoder extends Module {
  layers: ModuleList<TransformerEncoderLayer>;
  readonly numLayers: number;
  norm: Module | null;

  constructor(encoderLayer: TransformerEncoderLayer, numLayers: number, options: { norm?: Module | null } = {}) {
    super();
    checkStackArguments("TransformerEncoder", arguments, options);
    this.layers = cloneLayers(encoderLayer, numLayers, "TransformerEncoder");
    this.numLayers = numLayers;
    this.norm = options.norm ?? null;
  }

  override forward(src: Tensor, options: EncoderCallOptions & { mask?: Tensor | null } = {}): Tensor {
    checkOptions("TransformerEncoder.forward", options, ["mask", "srcMask", "srcKeyPaddingMask", "isCausal"]);
    const { mask, ...rest } = options;
    const layerOptions: EncoderCallOptions = { ...rest, srcMask: mask ?? options.srcMask };
    let x = src;
    for (const layer of this.layers) x = layer.call(x, layerOptions);
    return this.norm ? (this.norm.call(x) as Tensor) : x;
  }
}
