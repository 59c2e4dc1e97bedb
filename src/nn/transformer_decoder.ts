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

export interface DecoderCallOptions {
  /** Mask over target positions, [T, T] or [N·H, T, T] (typically causal). */
  tgtMask?: Tensor | null;
  /** Mask from target to memory positions, [T, S] or [N·H, T, S]. */
  memoryMask?: Tensor | null;
  tgtKeyPaddingMask?: Tensor | null;
  memoryKeyPaddingMask?: Tensor | null;
  /** Apply a causal mask to the target self-attention. */
  tgtIsCausal?: boolean;
}

export const DECODER_CALL_OPTIONS = ["tgtMask", "memoryMask", "tgtKeyPaddingMask", "memoryKeyPaddingMask", "tgtIsCausal"];

/**
 * Self-attention, attention over the encoder's memory, then feed-forward, each with a residual
 * connection (torch.nn.TransformerDecoderLayer; the same member names).
 */
export class TransformerDecoderLayer extends Module {
  self_attn: MultiheadAttention;
  multihead_attn: MultiheadAttention;
  linear1: Linear;
  dropout: Dropout;
  linear2: Linear;
  readonly normFirst: boolean;
  norm1: LayerNorm;
  norm2: LayerNorm;
  norm3: LayerNorm;
  dropout1: Dropout;
  dropout2: Dropout;
  dropout3: Dropout;
  activation: ((x: Tensor) => Tensor) | Module;

  constructor(dModel: number, nhead: number, options: TransformerLayerOptions = {}) {
    super();
    checkLayerArguments("TransformerDecoderLayer", arguments, options);
    const p = options.dropout ?? 0.1;
    const ff = options.dimFeedforward ?? 2048;
    const common = { bias: options.bias ?? true, dtype: options.dtype, generator: options.generator };
    const norm = { eps: options.layerNormEps ?? 1e-5, bias: options.bias ?? true, dtype: options.dtype };
    const attn = { dropout: p, batchFirst: options.batchFirst ?? false, ...common };
    const drop = () => new Dropout(p, { generator: options.generator });
    this.self_attn = new MultiheadAttention(dModel, nhead, attn);
    this.multihead_attn = new MultiheadAttention(dModel, nhead, attn);
    this.linear1 = new Linear(dModel, ff, common);
    this.dropout = drop();
    this.linear2 = new Linear(ff, dModel, common);
    this.normFirst = options.normFirst ?? false;
    this.norm1 = new LayerNorm(dModel, norm);
    this.norm2 = new LayerNorm(dModel, norm);
    this.norm3 = new LayerNorm(dModel, norm);
    this.dropout1 = drop();
    this.dropout2 = drop();
    this.dropout3 = drop();
    this.activation = resolveActivation(options.activation);
  }

  override forward(tgt: Tensor, memory: Tensor, options: DecoderCallOptions = {}): Tensor {
    checkOptions("TransformerDecoderLayer.forward", options, DECODER_CALL_OPTIONS);
    let x = tgt;
    if (this.normFirst) {
      x = add(x, this.selfAttentionBlock(this.norm1.call(x), options));
      x = add(x, this.memoryBlock(this.norm2.call(x), memory, options));
      x = add(x, this.feedForwardBlock(this.norm3.call(x)));
    } else {
      x = this.norm1.call(add(x, this.selfAttentionBlock(x, options)));
      x = this.norm2.call(add(x, this.memoryBlock(x, memory, options)));
      x = this.norm3.call(add(x, this.feedForwardBlock(x)));
    }
    return x;
  }

  private selfAttentionBlock(x: Tensor, options: DecoderCallOptions): Tensor {
    const [out] = this.self_attn.call(x, x, x, {
      attnMask: options.tgtMask,
      keyPaddingMask: options.tgtKeyPaddingMask,
      isCausal: options.tgtIsCausal,
      needWeights: false,
    });
    return this.dropout1.call(out);
  }

  private memoryBlock(x: Tensor, memory: Tensor, options: DecoderCallOptions): Tensor {
    const [out] = this.multihead_attn.call(x, memory, memory, {
      attnMask: options.memoryMask,
      keyPaddingMask: options.memoryKeyPaddingMask,
      needWeights: false,
    });
    return this.dropout2.call(out);
  }

  private feedForwardBlock(x: Tensor): Tensor {
    return this.dropout3.call(this.linear2.call(this.dropout.call(applyActivation(this.activation, this.linear1.call(x)))));
  }
}

/** numLayers copies of a decoder layer and an optional final norm (torch.nn.TransformerDecoder). */
export class TransformerDecoder extends Module {
  layers: ModuleList<TransformerDecoderLayer>;
  readonly numLayers: number;
  norm: Module | null;

  constructor(decoderLayer: TransformerDecoderLayer, numLayers: number, options: { norm?: Module | null } = {}) {
    super();
    checkStackArguments("TransformerDecoder", arguments, options);
    this.layers = cloneLayers(decoderLayer, numLayers, "TransformerDecoder");
    this.numLayers = numLayers;
    this.norm = options.norm ?? null;
  }

  override forward(tgt: Tensor, memory: Tensor, options: DecoderCallOptions = {}): Tensor {
    checkOptions("TransformerDecoder.forward", options, DECODER_CALL_OPTIONS);
    let x = tgt;
    for (const layer of this.layers) x = layer.call(x, memory, options);
    return this.norm ? (this.norm.call(x) as Tensor) : x;
  }
}
