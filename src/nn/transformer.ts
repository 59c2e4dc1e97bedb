import type { Tensor } from "../tensor/tensor.js";
import { generateSquareSubsequentMask } from "./attention.js";
import { xavierUniform_ } from "./init.js";
import { LayerNorm } from "./layer_norm.js";
import { Module } from "./module.js";
import { LAYER_OPTIONS, type TransformerLayerOptions } from "./transformer_common.js";
import { checkArity, checkOptions } from "../util/options.js";
import { DECODER_CALL_OPTIONS } from "./transformer_decoder.js";
import type { DecoderCallOptions } from "./transformer_decoder.js";
import { TransformerDecoder, TransformerDecoderLayer } from "./transformer_decoder.js";
import { TransformerEncoder, TransformerEncoderLayer } from "./transformer_encoder.js";

export interface TransformerOptions extends TransformerLayerOptions {
  dModel?: number;
  nhead?: number;
  numEncoderLayers?: number;
  numDecoderLayers?: number;
}

export interface TransformerCallOptions extends DecoderCallOptions {
  srcMask?: Tensor | null;
  srcKeyPaddingMask?: Tensor | null;
}

/**
 * The encoder-decoder of "Attention Is All You Need" (torch.nn.Transformer): an encoder stack and
 * a decoder stack, each ending in a LayerNorm, every matrix initialised xavier-uniform.
 */
export class Transformer extends Module {
  encoder: TransformerEncoder;
  decoder: TransformerDecoder;
  readonly dModel: number;
  readonly nhead: number;
  readonly batchFirst: boolean;

  constructor(options: TransformerOptions = {}) {
    super();
    checkArity("Transformer", arguments, 1, "new nn.Transformer({ dModel, nhead, numEncoderLayers, numDecoderLayers, dimFeedforward, … })");
    checkOptions("Transformer", options, ["dModel", "nhead", "numEncoderLayers", "numDecoderLayers", ...LAYER_OPTIONS]);
    const { dModel: _d, nhead: _n, numEncoderLayers: _e, numDecoderLayers: _l, ...layerOptions } = options;
    this.dModel = options.dModel ?? 512;
    this.nhead = options.nhead ?? 8;
    this.batchFirst = options.batchFirst ?? false;
    const norm = () => new LayerNorm(this.dModel, { eps: options.layerNormEps ?? 1e-5, bias: options.bias ?? true, dtype: options.dtype });
    const encoderLayer = new TransformerEncoderLayer(this.dModel, this.nhead, layerOptions);
    this.encoder = new TransformerEncoder(encoderLayer, options.numEncoderLayers ?? 6, { norm: norm() });
    const decoderLayer = new TransformerDecoderLayer(this.dModel, this.nhead, layerOptions);
    this.decoder = new TransformerDecoder(decoderLayer, options.numDecoderLayers ?? 6, { norm: norm() });
    for (const p of this.parameters()) if (p.ndim > 1) xavierUniform_(p, 1, options.generator);
  }

  override forward(src: Tensor, tgt: Tensor, options: TransformerCallOptions = {}): Tensor {
    checkOptions("Transformer.forward", options, ["srcMask", "srcKeyPaddingMask", ...DECODER_CALL_OPTIONS]);
    const { srcMask, srcKeyPaddingMask, ...decoderOptions } = options;
    const memory = this.encoder.call(src, { mask: srcMask, srcKeyPaddingMask });
    return this.decoder.call(tgt, memory, decoderOptions);
  }

  static generateSquareSubsequentMask(size: number): Tensor {
    return generateSquareSubsequentMask(size);
  }
}
