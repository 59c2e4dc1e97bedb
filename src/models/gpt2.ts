import { scaledDotProductAttention } from "../ops/attention.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { arange, empty, full, tensor } from "../ops/creation.js";
import { add, mul } from "../ops/elementwise.js";
import { cat } from "../ops/join.js";
import { linear } from "../ops/linear.js";
import { crossEntropy } from "../ops/loss.js";
import { linearCrossEntropy } from "../ops/linear_cross_entropy.js";
import { narrow, permute, reshape } from "../ops/view.js";
import { Dropout } from "../nn/dropout.js";
import { Embedding } from "../nn/embedding.js";
import { LayerNorm } from "../nn/layer_norm.js";
import { Linear } from "../nn/linear.js";
import { ModuleList } from "../nn/containers.js";
import { Module } from "../nn/module.js";
import { normal_ } from "../nn/init.js";
import type { DType } from "../tensor/dtype.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import type { Generator } from "../tensor/random.js";
import { checkArity, checkOptions } from "../util/options.js";
import { activation, initWeights, maskMin } from "./common.js";
import { readConfig, type HfConfig } from "./config.js";
import { gpt2Settings, type GPT2Settings } from "./gpt2_settings.js";
import { loadPretrainedWeights, savePretrainedWeights, type WeightLayout } from "./pretrained.js";

/** One layer's cached keys and values, [N, H, past, headDim] each. */
export interface LayerCache {
  key: Tensor;
  value: Tensor;
  /** Room reserved by `cacheCapacity`: key and value view its first positions (see CacheRoom). */
  room?: CacheRoom;
}

/**
 * [N, H, capacity, headDim] buffers that a cache's keys and values view the first `used` positions
 * of. A call continuing a cache that ends at `used` writes its keys after them in place, where a
 * plain cache copies the whole past into a new tensor every step (quadratic in the length, and a
 * fresh block of a new size each time). Any other continuation (the same cache continued twice,
 * no room left, autograd on) concatenates, so no view ever sees another continuation's writes.
 */
export interface CacheRoom {
  key: Tensor;
  value: Tensor;
  used: number;
}

export interface GPT2ForwardOptions {
  /** The cache returned by an earlier call; the new tokens continue after it. */
  pastKeyValues?: LayerCache[] | null;
  /** [N, past + L]: 1 (or true) for real tokens, 0 for padding, as HF's attention_mask. */
  attentionMask?: Tensor | null;
  /** [N, L] positions; default past, past + 1, …. */
  positionIds?: Tensor | null;
  /** Return the keys and values for the next call. */
  useCache?: boolean;
  /**
   * With useCache and no pastKeyValues: reserve room for this many positions in the returned cache,
   * so that later calls append their keys in place (as HF's StaticCache max_cache_len); generate sets it.
   */
  cacheCapacity?: number | null;
}

export interface GPT2LMForwardOptions extends GPT2ForwardOptions {
  /** [N, L] token ids to predict (shifted inside, as HF); -100 carries no loss. */
  labels?: Tensor | null;
  /**
   * Logits for the last k positions only, as HF's logits_to_keep (0, the default, keeps all):
   * generation needs one row, and the vocab-wide head is most of a step's work.
   */
  logitsToKeep?: number;
}

const FORWARD_OPTIONS = ["pastKeyValues", "attentionMask", "positionIds", "useCache", "cacheCapacity"];

export interface GPT2Options {
  dtype?: DType;
  /** Draws the initial weights (and dropout masks) from this generator. */
  generator?: Generator;
}

class GPT2Attention extends Module {
  c_attn: Linear;
  c_proj: Linear;
  resid_dropout: Dropout;
  private readonly s: GPT2Settings;
  private readonly generator: Generator | undefined;

  constructor(s: GPT2Settings, options: GPT2Options) {
    super();
    this.s = s;
    this.generator = options.generator;
    this.c_attn = new Linear(s.nEmbd, 3 * s.nEmbd, { dtype: options.dtype });
    this.c_proj = new Linear(s.nEmbd, s.nEmbd, { dtype: options.dtype });
    this.resid_dropout = new Dropout(s.residPdrop, { generator: options.generator });
  }

  override forward(x: Tensor, past: LayerCache | null, bias: Tensor | null, capacity: number | null): { out: Tensor; present: LayerCache } {
    const [n, l, e] = x.shape;
    const h = this.s.nHead;
    const d = e / h;
    const qkv = this.c_attn.call(x);
    const heads = (i: number) => permute(reshape(narrow(qkv, 2, i * e, e), [n, l, h, d]), [0, 2, 1, 3]);
    const q = heads(0);
    const present = withPast(past, heads(1), heads(2), capacity);
    const [k, v] = [present.key, present.value];
    // Without a cache or padding the mask is the plain causal flag; otherwise the caller's bias.
    const dropoutP = this.training ? this.s.attnPdrop : 0;
    const y = scaledDotProductAttention(q, k, v, bias ? { attnMask: bias, dropoutP, generator: this.generator } : { isCausal: l > 1, dropoutP, generator: this.generator });
    const merged = reshape(permute(y, [0, 2, 1, 3]), [n, l, e]);
    return { out: this.resid_dropout.call(this.c_proj.call(merged)), present };
  }
}

/** The past keys and values followed by the new ones: in the past's room when it can take them (see CacheRoom). */
function withPast(past: LayerCache | null, k: Tensor, v: Tensor, capacity: number | null): LayerCache {
  const p = past ? past.key.shape[2] : 0;
  const l = k.shape[2];
  const inPlace = !isGradEnabled() || !(k.requiresGrad || v.requiresGrad);
  let room = past ? past.room : undefined;
  if (!past && capacity !== null && capacity >= l && inPlace) {
    const [n, h, , d] = k.shape;
    room = { key: empty([n, h, capacity, d], { dtype: k.dtype }), value: empty([n, h, capacity, d], { dtype: v.dtype }), used: 0 };
  }
  if (room && room.used === p && p + l <= room.key.shape[2] && inPlace && room.key.dtype === k.dtype && room.value.dtype === v.dtype) {
    narrow(room.key, 2, p, l).copy_(k);
    narrow(room.value, 2, p, l).copy_(v);
    room.used = p + l;
    return { key: narrow(room.key, 2, 0, p + l), value: narrow(room.value, 2, 0, p + l), room };
  }
  return past ? { key: cat([past.key, k], 2), value: cat([past.value, v], 2) } : { key: k, value: v };
}

class GPT2MLP extends Module {
  c_fc: Linear;
  c_proj: Linear;
  dropout: Dropout;
  private readonly act: (x: Tensor) => Tensor;

  constructor(s: GPT2Settings, options: GPT2Options) {
    super();
    this.c_fc = new Linear(s.nEmbd, s.nInner, { dtype: options.dtype });
    this.c_proj = new Linear(s.nInner, s.nEmbd, { dtype: options.dtype });
    this.dropout = new Dropout(s.residPdrop, { generator: options.generator });
    this.act = activation(s.activation, "GPT2");
  }

  override forward(x: Tensor): Tensor {
    return this.dropout.call(this.c_proj.call(this.act(this.c_fc.call(x))));
  }
}

class GPT2Block extends Module {
  ln_1: LayerNorm;
  attn: GPT2Attention;
  ln_2: LayerNorm;
  mlp: GPT2MLP;

  constructor(s: GPT2Settings, options: GPT2Options) {
    super();
    this.ln_1 = new LayerNorm(s.nEmbd, { eps: s.layerNormEpsilon, dtype: options.dtype });
    this.attn = new GPT2Attention(s, options);
    this.ln_2 = new LayerNorm(s.nEmbd, { eps: s.layerNormEpsilon, dtype: options.dtype });
    this.mlp = new GPT2MLP(s, options);
  }

  override forward(x: Tensor, past: LayerCache | null, bias: Tensor | null, capacity: number | null): { out: Tensor; present: LayerCache } {
    const a = this.attn.call(this.ln_1.call(x), past, bias, capacity);
    const h = add(x, a.out);
    return { out: add(h, this.mlp.call(this.ln_2.call(h))), present: a.present };
  }
}

/** HF stores Conv1D weights [in, out]; ringtorch's Linear holds [out, in]. */
export const GPT2_LAYOUT: WeightLayout = {
  basePrefix: "transformer",
  transposed: (name) => /\.(c_attn|c_proj|c_fc)\.weight$/.test(name),
  ignorable: (name) => name === "lm_head.weight" || /\.attn\.(bias|masked_bias)$/.test(name),
};

/**
 * The additive bias for cached or padded attention: query i (at absolute position past + i) sees
 * key j when j ≤ past + i and attentionMask marks j real; hidden entries get the dtype's most
 * negative value, as HF, so that a padded query row stays finite.
 */
function attentionBias(n: number, l: number, past: number, mask: Tensor | null, dtype: DType): Tensor {
  const s = past + l;
  const keep = mask ? (mask.toArray() as (number | boolean)[][]) : null;
  if (keep && (mask!.ndim !== 2 || mask!.shape[0] !== n || mask!.shape[1] !== s)) {
    throw new RangeError(`GPT2Model: attentionMask must have shape [${n}, ${s}] (batch, past + new tokens), got ${formatShape(mask!.shape)}`);
  }
  const values = new Array<number>(n * l * s);
  const min = maskMin(dtype);
  for (let b = 0; b < n; b++) {
    for (let i = 0; i < l; i++) {
      for (let j = 0; j < s; j++) values[(b * l + i) * s + j] = j <= past + i && (!keep || Number(keep[b][j]) !== 0) ? 0 : min;
    }
  }
  return tensor(values, { dtype, shape: [n, 1, l, s] });
}

/** The GPT-2 transformer (HF's GPT2Model): token and learned position embeddings, pre-LN blocks, ln_f. */
export class GPT2Model extends Module {
  wte: Embedding;
  wpe: Embedding;
  drop: Dropout;
  h: ModuleList<GPT2Block>;
  ln_f: LayerNorm;
  readonly settings: GPT2Settings;
  readonly config: HfConfig;

  constructor(config: HfConfig, options: GPT2Options = {}) {
    super();
    checkArity("GPT2Model", arguments, 2, "new models.GPT2Model(config, { dtype, generator })");
    checkOptions("GPT2Model", options, ["dtype", "generator"]);
    const s = gpt2Settings(config, "GPT2Model");
    this.config = { ...config };
    this.settings = s;
    this.wte = new Embedding(s.vocabSize, s.nEmbd, { dtype: options.dtype });
    this.wpe = new Embedding(s.nPositions, s.nEmbd, { dtype: options.dtype });
    this.drop = new Dropout(s.embdPdrop, { generator: options.generator });
    this.h = new ModuleList(Array.from({ length: s.nLayer }, () => new GPT2Block(s, options)));
    this.ln_f = new LayerNorm(s.nEmbd, { eps: s.layerNormEpsilon, dtype: options.dtype });
    initWeights(this, s.initializerRange, options.generator);
    // GPT-2's scaled init of the residual projections: std / √(2·layers).
    for (const block of this.h) {
      for (const proj of [block.attn.c_proj, block.mlp.c_proj]) normal_(proj.weight, 0, s.initializerRange / Math.sqrt(2 * s.nLayer), options.generator);
    }
  }

  override forward(inputIds: Tensor, options: GPT2ForwardOptions = {}): { lastHiddenState: Tensor; pastKeyValues: LayerCache[] | null } {
    checkOptions("GPT2Model.forward", options, FORWARD_OPTIONS);
    if (inputIds.ndim !== 2 || inputIds.dtype !== "int32") {
      throw new RangeError(`GPT2Model: inputIds must be an int32 tensor [batch, seq], got ${inputIds.dtype} ${formatShape(inputIds.shape)}`);
    }
    const [n, l] = inputIds.shape;
    const pastList = options.pastKeyValues ?? null;
    if (pastList && pastList.length !== this.settings.nLayer) throw new RangeError(`GPT2Model: pastKeyValues has ${pastList.length} layers, the model ${this.settings.nLayer}`);
    const past = pastList ? pastList[0].key.shape[2] : 0;
    if (past + l > this.settings.nPositions) {
      throw new RangeError(`GPT2Model: ${past + l} positions (past ${past} + ${l} new) exceed config.n_positions = ${this.settings.nPositions}`);
    }
    const positions = options.positionIds ?? arange(past, past + l, 1, { dtype: "int32" });
    const x0 = add(this.wte.call(inputIds), this.wpe.call(positions));
    let x = this.drop.call(x0);
    const dtype = x.dtype;
    const bias = options.attentionMask || (past > 0 && l > 1) ? attentionBias(n, l, past, options.attentionMask ?? null, dtype) : null;
    const capacity = options.cacheCapacity ?? null;
    if (capacity !== null && !(Number.isInteger(capacity) && capacity >= 0)) throw new RangeError(`GPT2Model: cacheCapacity must be a non-negative integer, got ${capacity}`);
    const presents: LayerCache[] = [];
    let i = 0;
    for (const block of this.h) {
      const r = block.call(x, pastList ? pastList[i++] : null, bias, options.useCache ? capacity : null);
      x = r.out;
      presents.push(r.present);
    }
    return { lastHiddenState: this.ln_f.call(x), pastKeyValues: options.useCache ? presents : null };
  }

  static fromPretrained(dir: string, options: GPT2Options = {}): GPT2Model {
    const model = new GPT2Model(readConfig(dir, "GPT2Model.fromPretrained"), options);
    loadPretrainedWeights(model, dir, GPT2_LAYOUT, "GPT2Model.fromPretrained");
    return model.eval();
  }

  savePretrained(dir: string): void {
    savePretrainedWeights(this, dir, { ...this.config, architectures: ["GPT2Model"], model_type: "gpt2" }, GPT2_LAYOUT);
  }
}

/** GPT-2 with the language-modelling head tied to the token embedding (HF's GPT2LMHeadModel). */
export class GPT2LMHeadModel extends Module {
  transformer: GPT2Model;

  constructor(config: HfConfig, options: GPT2Options = {}) {
    super();
    checkArity("GPT2LMHeadModel", arguments, 2, "new models.GPT2LMHeadModel(config, { dtype, generator })");
    checkOptions("GPT2LMHeadModel", options, ["dtype", "generator"]);
    if (config.tie_word_embeddings === false) throw new RangeError("GPT2LMHeadModel: config.tie_word_embeddings = false is not supported (GPT-2 ties lm_head to wte)");
    this.transformer = new GPT2Model(config, options);
  }

  get config(): HfConfig {
    return this.transformer.config;
  }

  get settings(): GPT2Settings {
    return this.transformer.settings;
  }

  /** logits [N, L, vocab]; loss (mean over labelled next tokens) when labels are given. */
  override forward(inputIds: Tensor, options: GPT2LMForwardOptions = {}): { logits: Tensor; loss: Tensor | null; pastKeyValues: LayerCache[] | null } {
    checkOptions("GPT2LMHeadModel.forward", options, [...FORWARD_OPTIONS, "labels", "logitsToKeep"]);
    const { labels, logitsToKeep = 0, ...rest } = options;
    if (!Number.isInteger(logitsToKeep) || logitsToKeep < 0) throw new RangeError(`GPT2LMHeadModel: logitsToKeep must be a non-negative integer (0 keeps all), got ${logitsToKeep}`);
    if (logitsToKeep && labels) throw new RangeError("GPT2LMHeadModel: logitsToKeep and labels cannot go together (the loss needs every position's logits)");
    const { lastHiddenState, pastKeyValues } = this.transformer.call(inputIds, rest);
    const weight = this.transformer.wte.weight;
    if (!labels) {
      const l = lastHiddenState.shape[1];
      const kept = logitsToKeep && logitsToKeep < l ? narrow(lastHiddenState, 1, l - logitsToKeep, logitsToKeep) : lastHiddenState;
      return { logits: linear(kept, weight), loss: null, pastKeyValues };
    }
    if (labels.ndim !== 2 || labels.shape[0] !== inputIds.shape[0] || labels.shape[1] !== inputIds.shape[1]) {
      throw new RangeError(`GPT2LMHeadModel: labels must have inputIds' shape ${formatShape(inputIds.shape)}, got ${formatShape(labels.shape)}`);
    }
    const [n, l, e] = lastHiddenState.shape;
    if (l < 2) {
      const logits = linear(lastHiddenState, weight);
      return { logits, loss: causalLmLoss(logits, labels), pastKeyValues };
    }
    // The head and its loss in one op, whose backward never makes the [N·L, vocab] logits gradient.
    const head = linearCrossEntropy(reshape(lastHiddenState, [n * l, e]), weight, shiftedLabels(labels));
    return { logits: reshape(head.logits, [n, l, weight.shape[0]]), loss: head.loss, pastKeyValues };
  }

  static fromPretrained(dir: string, options: GPT2Options = {}): GPT2LMHeadModel {
    const model = new GPT2LMHeadModel(readConfig(dir, "GPT2LMHeadModel.fromPretrained"), options);
    loadPretrainedWeights(model, dir, GPT2_LAYOUT, "GPT2LMHeadModel.fromPretrained");
    return model.eval();
  }

  savePretrained(dir: string): void {
    savePretrainedWeights(this, dir, { ...this.config, architectures: ["GPT2LMHeadModel"], model_type: "gpt2" }, GPT2_LAYOUT);
  }
}

/** labels[:, t + 1] for each position t, -100 (no loss) at the last one: HF's shift, applied to the labels. */
function shiftedLabels(labels: Tensor): Tensor {
  const [n, l] = labels.shape;
  return reshape(cat([narrow(labels, 1, 1, l - 1), full([n, 1], -100, { dtype: "int32" })], 1), [n * l]);
}

/**
 * Mean cross-entropy of logits[:, t] against labels[:, t + 1], skipping -100 (HF's ForCausalLMLoss).
 * As there, the labels are shifted rather than the logits, so the [N·L, vocab] logits go to the
 * loss as a view, never copied.
 */
export function causalLmLoss(logits: Tensor, labels: Tensor): Tensor {
  const [n, l, vocab] = logits.shape;
  if (l < 2) return mul(full([], Number.NaN, { dtype: logits.dtype }), 1);
  return crossEntropy(reshape(logits, [n * l, vocab]), shiftedLabels(labels), { ignoreIndex: -100 });
}
