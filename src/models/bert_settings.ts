import { intField, numField, strField, type HfConfig } from "./config.js";

/** The parsed fields of a BERT config.json, with HF's defaults. */
export interface BertSettings {
  vocabSize: number;
  hiddenSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  intermediateSize: number;
  hiddenAct: string;
  hiddenDropoutProb: number;
  attentionProbsDropoutProb: number;
  maxPositionEmbeddings: number;
  typeVocabSize: number;
  layerNormEps: number;
  initializerRange: number;
  padTokenId: number;
  numLabels: number;
  classifierDropout: number;
}

export function bertSettings(config: HfConfig, where: string): BertSettings {
  const hiddenSize = intField(config, "hidden_size", 768, where);
  const heads = intField(config, "num_attention_heads", 12, where);
  if (heads < 1 || hiddenSize % heads !== 0) throw new RangeError(`${where}: config.hidden_size (${hiddenSize}) must be divisible by config.num_attention_heads (${heads})`);
  const pet = config.position_embedding_type ?? "absolute";
  if (pet !== "absolute") throw new RangeError(`${where}: config.position_embedding_type "${String(pet)}" is not supported (only "absolute")`);
  const labels = config.id2label && typeof config.id2label === "object" ? Object.keys(config.id2label).length : undefined;
  const hiddenDropout = numField(config, "hidden_dropout_prob", 0.1, where);
  return {
    vocabSize: intField(config, "vocab_size", 30522, where),
    hiddenSize,
    numHiddenLayers: intField(config, "num_hidden_layers", 12, where),
    numAttentionHeads: heads,
    intermediateSize: intField(config, "intermediate_size", 3072, where),
    hiddenAct: strField(config, "hidden_act", "gelu", where),
    hiddenDropoutProb: hiddenDropout,
    attentionProbsDropoutProb: numField(config, "attention_probs_dropout_prob", 0.1, where),
    maxPositionEmbeddings: intField(config, "max_position_embeddings", 512, where),
    typeVocabSize: intField(config, "type_vocab_size", 2, where),
    layerNormEps: numField(config, "layer_norm_eps", 1e-12, where),
    initializerRange: numField(config, "initializer_range", 0.02, where),
    padTokenId: intField(config, "pad_token_id", 0, where),
    numLabels: intField(config, "num_labels", labels ?? 2, where),
    classifierDropout: config.classifier_dropout == null ? hiddenDropout : numField(config, "classifier_dropout", 0, where),
  };
}
