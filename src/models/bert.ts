import { scaledDotProductAttention } from "../ops/attention.js";
import { arange, tensor, zeros } from "../ops/creation.js";
import { add, tanh } from "../ops/elementwise.js";
import { crossEntropy, mseLoss } from "../ops/loss.js";
import { max, min } from "../ops/extrema.js";
import { permute, reshape, select } from "../ops/view.js";
import { Dropout } from "../nn/dropout.js";
import { Embedding } from "../nn/embedding.js";
import { LayerNorm } from "../nn/layer_norm.js";
import { Linear } from "../nn/linear.js";
import { ModuleList } from "../nn/containers.js";
import { Module } from "../nn/module.js";
import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import { activation, initWeights, maskMin } from "./common.js";
import { readConfig, type HfConfig } from "./config.js";
import { bertSettings, type BertSettings } from "./bert_settings.js";
import { loadPretrainedWeights, savePretrainedWeights, type WeightLayout } from "./pretrained.js";

export interface BertOptions {
  dtype?: DType;
  generator?: Generator;
}

export interface BertForwardOptions {
  /** [N, L]: 1 for real tokens, 0 for padding (HF's attention_mask). */
  attentionMask?: Tensor | null;
  /** [N, L] segment ids (HF's token_type_ids); default all 0. */
  tokenTypeIds?: Tensor | null;
  positionIds?: Tensor | null;
}

const FORWARD_OPTIONS = ["attentionMask", "tokenTypeIds", "positionIds"];

class BertEmbeddings extends Module {
  word_embeddings: Embedding;
  position_embeddings: Embedding;
  token_type_embeddings: Embedding;
  LayerNorm: LayerNorm;
  dropout: Dropout;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.word_embeddings = new Embedding(s.vocabSize, s.hiddenSize, { paddingIdx: s.padTokenId, dtype: o.dtype });
    this.position_embeddings = new Embedding(s.maxPositionEmbeddings, s.hiddenSize, { dtype: o.dtype });
    this.token_type_embeddings = new Embedding(s.typeVocabSize, s.hiddenSize, { dtype: o.dtype });
    this.LayerNorm = new LayerNorm(s.hiddenSize, { eps: s.layerNormEps, dtype: o.dtype });
    this.dropout = new Dropout(s.hiddenDropoutProb, { generator: o.generator });
  }

  override forward(ids: Tensor, types: Tensor, positions: Tensor): Tensor {
    const e = add(add(this.word_embeddings.call(ids), this.token_type_embeddings.call(types)), this.position_embeddings.call(positions));
    return this.dropout.call(this.LayerNorm.call(e));
  }
}

class BertSelfAttention extends Module {
  query: Linear;
  key: Linear;
  value: Linear;
  private readonly heads: number;
  private readonly dropoutP: number;
  private readonly generator: Generator | undefined;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.query = new Linear(s.hiddenSize, s.hiddenSize, { dtype: o.dtype });
    this.key = new Linear(s.hiddenSize, s.hiddenSize, { dtype: o.dtype });
    this.value = new Linear(s.hiddenSize, s.hiddenSize, { dtype: o.dtype });
    this.heads = s.numAttentionHeads;
    this.dropoutP = s.attentionProbsDropoutProb;
    this.generator = o.generator;
  }

  override forward(x: Tensor, bias: Tensor | null): Tensor {
    const [n, l, e] = x.shape;
    const d = e / this.heads;
    const split = (t: Tensor) => permute(reshape(t, [n, l, this.heads, d]), [0, 2, 1, 3]);
    const y = scaledDotProductAttention(split(this.query.call(x)), split(this.key.call(x)), split(this.value.call(x)), {
      attnMask: bias,
      dropoutP: this.training ? this.dropoutP : 0,
      generator: this.generator,
    });
    return reshape(permute(y, [0, 2, 1, 3]), [n, l, e]);
  }
}

/** dense → dropout → LayerNorm(· + residual): HF's BertSelfOutput and BertOutput. */
class BertResidualOutput extends Module {
  dense: Linear;
  LayerNorm: LayerNorm;
  dropout: Dropout;

  constructor(inFeatures: number, s: BertSettings, o: BertOptions) {
    super();
    this.dense = new Linear(inFeatures, s.hiddenSize, { dtype: o.dtype });
    this.LayerNorm = new LayerNorm(s.hiddenSize, { eps: s.layerNormEps, dtype: o.dtype });
    this.dropout = new Dropout(s.hiddenDropoutProb, { generator: o.generator });
  }

  override forward(x: Tensor, residual: Tensor): Tensor {
    return this.LayerNorm.call(add(this.dropout.call(this.dense.call(x)), residual));
  }
}

class BertAttention extends Module {
  self: BertSelfAttention;
  output: BertResidualOutput;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.self = new BertSelfAttention(s, o);
    this.output = new BertResidualOutput(s.hiddenSize, s, o);
  }

  override forward(x: Tensor, bias: Tensor | null): Tensor {
    return this.output.call(this.self.call(x, bias), x);
  }
}

class BertIntermediate extends Module {
  dense: Linear;
  private readonly act: (x: Tensor) => Tensor;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.dense = new Linear(s.hiddenSize, s.intermediateSize, { dtype: o.dtype });
    this.act = activation(s.hiddenAct, "BertModel");
  }

  override forward(x: Tensor): Tensor {
    return this.act(this.dense.call(x));
  }
}

class BertLayer extends Module {
  attention: BertAttention;
  intermediate: BertIntermediate;
  output: BertResidualOutput;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.attention = new BertAttention(s, o);
    this.intermediate = new BertIntermediate(s, o);
    this.output = new BertResidualOutput(s.intermediateSize, s, o);
  }

  override forward(x: Tensor, bias: Tensor | null): Tensor {
    const a = this.attention.call(x, bias);
    return this.output.call(this.intermediate.call(a), a);
  }
}

class BertEncoder extends Module {
  layer: ModuleList<BertLayer>;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.layer = new ModuleList(Array.from({ length: s.numHiddenLayers }, () => new BertLayer(s, o)));
  }

  override forward(x: Tensor, bias: Tensor | null): Tensor {
    for (const layer of this.layer) x = layer.call(x, bias);
    return x;
  }
}

class BertPooler extends Module {
  dense: Linear;

  constructor(s: BertSettings, o: BertOptions) {
    super();
    this.dense = new Linear(s.hiddenSize, s.hiddenSize, { dtype: o.dtype });
  }

  /** tanh(dense(hidden state of the first token, [CLS])). */
  override forward(hidden: Tensor): Tensor {
    return tanh(this.dense.call(select(hidden, 1, 0)));
  }
}

export const BERT_LAYOUT: WeightLayout = {
  basePrefix: "bert",
  transposed: () => false,
  // Buffers and pretraining heads that a base or classification model does not use.
  ignorable: (name) => /(^|\.)position_ids$/.test(name) || name.startsWith("cls.") || /(^|\.)token_type_ids$/.test(name),
};

function checkIds(t: Tensor | null | undefined, name: string, n: number, l: number): void {
  if (!t) return;
  if (t.ndim !== 2 || t.shape[0] !== n || t.shape[1] !== l) throw new RangeError(`BertModel: ${name} must have shape [${n}, ${l}] like inputIds, got ${formatShape(t.shape)}`);
}

/** BERT's encoder with embeddings and the [CLS] pooler (HF's BertModel). */
export class BertModel extends Module {
  embeddings: BertEmbeddings;
  encoder: BertEncoder;
  pooler: BertPooler;
  readonly settings: BertSettings;
  readonly config: HfConfig;

  constructor(config: HfConfig, options: BertOptions = {}) {
    super();
    checkArity("BertModel", arguments, 2, "new models.BertModel(config, { dtype, generator })");
    checkOptions("BertModel", options, ["dtype", "generator"]);
    this.settings = bertSettings(config, "BertModel");
    this.config = { ...config };
    this.embeddings = new BertEmbeddings(this.settings, options);
    this.encoder = new BertEncoder(this.settings, options);
    this.pooler = new BertPooler(this.settings, options);
    initWeights(this, this.settings.initializerRange, options.generator);
  }

  override forward(inputIds: Tensor, options: BertForwardOptions = {}): { lastHiddenState: Tensor; poolerOutput: Tensor } {
    checkOptions("BertModel.forward", options, FORWARD_OPTIONS);
    if (inputIds.ndim !== 2 || inputIds.dtype !== "int32") throw new RangeError(`BertModel: inputIds must be an int32 tensor [batch, seq], got ${inputIds.dtype} ${formatShape(inputIds.shape)}`);
    const [n, l] = inputIds.shape;
    if (l > this.settings.maxPositionEmbeddings) throw new RangeError(`BertModel: sequence length ${l} exceeds config.max_position_embeddings = ${this.settings.maxPositionEmbeddings}`);
    checkIds(options.attentionMask, "attentionMask", n, l);
    checkIds(options.tokenTypeIds, "tokenTypeIds", n, l);
    const types = options.tokenTypeIds ?? zeros([n, l], { dtype: "int32" });
    const positions = options.positionIds ?? arange(0, l, 1, { dtype: "int32" });
    const x = this.embeddings.call(inputIds, types, positions);
    let bias: Tensor | null = null;
    if (options.attentionMask) {
      // HF's extended mask: (1 - mask) · min, so a padded key gets the most negative finite score.
      const keep = options.attentionMask.toArray() as number[][];
      const lowest = maskMin(x.dtype);
      bias = tensor(keep.flat().map((v) => (Number(v) !== 0 ? 0 : lowest)), { dtype: x.dtype, shape: [n, 1, 1, l] });
    }
    const hidden = this.encoder.call(x, bias);
    return { lastHiddenState: hidden, poolerOutput: this.pooler.call(hidden) };
  }

  static fromPretrained(dir: string, options: BertOptions = {}): BertModel {
    const model = new BertModel(readConfig(dir, "BertModel.fromPretrained"), options);
    loadPretrainedWeights(model, dir, BERT_LAYOUT, "BertModel.fromPretrained");
    return model.eval();
  }

  savePretrained(dir: string): void {
    savePretrainedWeights(this, dir, { ...this.config, architectures: ["BertModel"], model_type: "bert" }, BERT_LAYOUT);
  }
}

export interface BertClassifierForwardOptions extends BertForwardOptions {
  /** [N] class ids (int32), or [N] targets (float) for num_labels = 1 (regression, MSE). */
  labels?: Tensor | null;
}

/** BERT with dropout and a linear classifier on the pooled [CLS] output (HF's BertForSequenceClassification). */
export class BertForSequenceClassification extends Module {
  bert: BertModel;
  dropout: Dropout;
  classifier: Linear;

  constructor(config: HfConfig, options: BertOptions = {}) {
    super();
    checkArity("BertForSequenceClassification", arguments, 2, "new models.BertForSequenceClassification(config, { dtype, generator })");
    checkOptions("BertForSequenceClassification", options, ["dtype", "generator"]);
    this.bert = new BertModel(config, options);
    const s = this.bert.settings;
    if (s.numLabels < 1) throw new RangeError(`BertForSequenceClassification: config.num_labels must be at least 1, got ${s.numLabels}`);
    this.dropout = new Dropout(s.classifierDropout, { generator: options.generator });
    this.classifier = new Linear(s.hiddenSize, s.numLabels, { dtype: options.dtype });
    initWeights(this.classifier, s.initializerRange, options.generator);
  }

  get config(): HfConfig {
    return this.bert.config;
  }

  override forward(inputIds: Tensor, options: BertClassifierForwardOptions = {}): { logits: Tensor; loss: Tensor | null } {
    checkOptions("BertForSequenceClassification.forward", options, [...FORWARD_OPTIONS, "labels"]);
    const { labels, ...rest } = options;
    const { poolerOutput } = this.bert.call(inputIds, rest);
    const logits = this.classifier.call(this.dropout.call(poolerOutput));
    if (!labels) return { logits, loss: null };
    const classes = this.bert.settings.numLabels;
    if (labels.ndim !== 1 || labels.shape[0] !== inputIds.shape[0]) throw new RangeError(`BertForSequenceClassification: labels must have shape [${inputIds.shape[0]}], got ${formatShape(labels.shape)}`);
    if (classes === 1) return { logits, loss: mseLoss(reshape(logits, [-1]), labels.dtype === logits.dtype ? labels : labels.to(logits.dtype)) };
    if (labels.numel > 0) {
      const lo = Number(min(labels).item());
      const hi = Number(max(labels).item());
      if (lo < 0 || hi >= classes) throw new RangeError(`BertForSequenceClassification: labels must be class ids in [0, ${classes - 1}] (config.num_labels = ${classes}), got ${lo < 0 ? lo : hi}`);
    }
    return { logits, loss: crossEntropy(logits, labels) };
  }

  static fromPretrained(dir: string, options: BertOptions = {}): BertForSequenceClassification {
    const model = new BertForSequenceClassification(readConfig(dir, "BertForSequenceClassification.fromPretrained"), options);
    const fresh = loadPretrainedWeights(model, dir, BERT_LAYOUT, "BertForSequenceClassification.fromPretrained");
    if (fresh.length > 0) process.stderr.write(`BertForSequenceClassification.fromPretrained: ${fresh.join(", ")} not in ${dir}; freshly initialised (train before use)\n`);
    return model.eval();
  }

  savePretrained(dir: string): void {
    savePretrainedWeights(this, dir, { ...this.config, architectures: ["BertForSequenceClassification"], model_type: "bert" }, BERT_LAYOUT);
  }
}
