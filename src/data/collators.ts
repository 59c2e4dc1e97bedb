/**
 * Collators for tokenized text (transformers' DataCollatorWithPadding and the causal-LM
 * collator): a list of features with token ids of different lengths becomes tensors of one length.
 */
import { tensor } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { padSequence } from "./pad_sequence.js";

export interface TextFeature {
  inputIds: readonly number[];
  attentionMask?: readonly number[];
  tokenTypeIds?: readonly number[];
  /** A class label (number) or per-token labels (array). */
  labels?: number | readonly number[];
  label?: number;
}

export interface TextBatch {
  inputIds: Tensor;
  attentionMask: Tensor;
  tokenTypeIds?: Tensor;
  labels?: Tensor;
}

export interface PaddingCollatorOptions {
  /** The pad token's id; or give `tokenizer` and it comes from the tokenizer's padding or its [PAD]. */
  padId?: number;
  tokenizer?: { tokenToId(token: string): number | undefined; padding?: { padId: number } | null };
  /** "longest" (default) or "maxLength" (pads to maxLength). */
  padding?: "longest" | "maxLength";
  maxLength?: number;
  padToMultipleOf?: number;
  paddingSide?: "right" | "left";
}

/**
 * Pads each batch to its longest sequence (or maxLength): input ids with padId, attention masks
 * and token types with 0, per-token labels with -100 (ignored by crossEntropy's ignoreIndex).
 */
export class DataCollatorWithPadding {
  readonly options: PaddingCollatorOptions;
  constructor(options: PaddingCollatorOptions) {
    checkOptions("DataCollatorWithPadding", options, ["padId", "tokenizer", "padding", "maxLength", "padToMultipleOf", "paddingSide"]);
    const padId = options?.padId ?? options?.tokenizer?.padding?.padId ?? options?.tokenizer?.tokenToId("[PAD]");
    if (!Number.isInteger(padId)) throw new TypeError("DataCollatorWithPadding: give padId (the pad token's id) or a tokenizer that has a [PAD] token or padding enabled");
    if (options.padding === "maxLength" && options.maxLength === undefined) throw new RangeError('DataCollatorWithPadding: padding "maxLength" needs maxLength');
    this.options = { ...options, padId };
  }
  /** Usable as a DataLoader's collateFn. */
  readonly collate = (features: readonly TextFeature[]): TextBatch => this.call(features);
  call(features: readonly TextFeature[]): TextBatch {
    if (features.length === 0) throw new RangeError("DataCollatorWithPadding: empty batch");
    const o = this.options;
    features.forEach((f, i) => {
      if (!Array.isArray(f.inputIds)) throw new TypeError(`DataCollatorWithPadding: feature ${i} has no inputIds array`);
    });
    let length = o.padding === "maxLength" ? o.maxLength! : Math.max(...features.map((f) => f.inputIds.length));
    if (o.padToMultipleOf && length % o.padToMultipleOf !== 0) length += o.padToMultipleOf - (length % o.padToMultipleOf);
    const opts = { length, paddingSide: o.paddingSide };
    const batch: TextBatch = {
      inputIds: padSequence(features.map((f) => f.inputIds), { ...opts, paddingValue: o.padId! }),
      attentionMask: padSequence(features.map((f) => f.attentionMask ?? f.inputIds.map(() => 1)), { ...opts, paddingValue: 0 }),
    };
    if (features[0].tokenTypeIds !== undefined) batch.tokenTypeIds = padSequence(features.map((f) => f.tokenTypeIds ?? []), { ...opts, paddingValue: 0 });
    const labels = features.map((f) => f.labels ?? f.label);
    if (labels[0] !== undefined) {
      if (labels.every((l) => typeof l === "number")) batch.labels = tensor(Int32Array.from(labels as number[]));
      else if (labels.every((l) => Array.isArray(l))) batch.labels = padSequence(labels as number[][], { ...opts, paddingValue: -100 });
      else throw new TypeError("DataCollatorWithPadding: labels must all be numbers (classes) or all arrays (per token)");
    }
    return batch;
  }
}

/**
 * Causal language modelling: pads like DataCollatorWithPadding and sets labels to the input ids,
 * with -100 where there is padding (the model shifts labels itself, as transformers' models do).
 */
export class DataCollatorForLanguageModeling extends DataCollatorWithPadding {
  override call(features: readonly TextFeature[]): TextBatch {
    const batch = super.call(features.map((f) => ({ inputIds: f.inputIds, attentionMask: f.attentionMask })));
    const ids = batch.inputIds.data() as Int32Array;
    const mask = batch.attentionMask.data() as Int32Array;
    const labels = Int32Array.from(ids, (v, i) => (mask[i] === 0 ? -100 : v));
    return { ...batch, labels: tensor(labels, { shape: batch.inputIds.shape }) };
  }
}
