import { intField, numField, strField, type HfConfig } from "./config.js";

/** The parsed fields of a GPT-2 config.json, with HF's defaults. */
export interface GPT2Settings {
  vocabSize: number;
  nPositions: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nInner: number;
  activation: string;
  residPdrop: number;
  embdPdrop: number;
  attnPdrop: number;
  layerNormEpsilon: number;
  initializerRange: number;
  eosTokenId: number | null;
}

export function gpt2Settings(config: HfConfig, where: string): GPT2Settings {
  const nEmbd = intField(config, "n_embd", 768, where);
  const nHead = intField(config, "n_head", 12, where);
  if (nHead < 1 || nEmbd % nHead !== 0) throw new RangeError(`${where}: config.n_embd (${nEmbd}) must be divisible by config.n_head (${nHead})`);
  const eos = config.eos_token_id;
  return {
    vocabSize: intField(config, "vocab_size", 50257, where),
    nPositions: intField(config, "n_positions", 1024, where),
    nEmbd,
    nLayer: intField(config, "n_layer", 12, where),
    nHead,
    nInner: config.n_inner == null ? 4 * nEmbd : intField(config, "n_inner", undefined, where),
    activation: strField(config, "activation_function", "gelu_new", where),
    residPdrop: numField(config, "resid_pdrop", 0.1, where),
    embdPdrop: numField(config, "embd_pdrop", 0.1, where),
    attnPdrop: numField(config, "attn_pdrop", 0.1, where),
    layerNormEpsilon: numField(config, "layer_norm_epsilon", 1e-5, where),
    initializerRange: numField(config, "initializer_range", 0.02, where),
    eosTokenId: typeof eos === "number" ? eos : null,
  };
}
