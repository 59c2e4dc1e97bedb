import type { Module } from "../nn/module.js";
import { Tensor } from "../tensor/tensor.js";

/** What computeMetrics receives (transformers.EvalPrediction): every sample once, in dataset order. */
export interface EvalPrediction {
  predictions: Tensor;
  labelIds: Tensor | null;
}

/** Computes the loss from a model's outputs and the batch's labels (HF's computeLossFunc). */
export type ComputeLossFunc = (outputs: unknown, labels: Tensor) => Tensor;

export interface StepOutput {
  loss: Tensor | null;
  logits: Tensor | null;
  labels: Tensor | null;
  /** Samples in the batch (rows of the logits or labels). */
  size: number;
}

/**
 * How a model takes a batch: "batch", the collated object as its one argument (a module written
 * for the Trainer); "inputIds", `model.call(batch.inputIds, { ...the other keys })`, the signature
 * of ringtorch's Hugging Face models (BertForSequenceClassification, GPT2LMHeadModel, …), which is
 * what HF's `model(**inputs)` becomes in TypeScript.
 */
export type CallStyle = "batch" | "inputIds";

/** "inputIds" for a Hugging Face-style model (one with a config and savePretrained), else "batch". */
export function callStyleOf(model: Module): CallStyle {
  const m = model as unknown as { savePretrained?: unknown; config?: unknown };
  return typeof m.savePretrained === "function" && m.config !== undefined ? "inputIds" : "batch";
}

/**
 * One forward pass in Hugging Face's convention: the collated batch (an object such as
 * { inputIds, attentionMask, labels }) is the model's one argument, and a model given labels
 * returns { loss, logits }. With computeLossFunc the labels are taken out of the batch first and
 * the loss is computed from the outputs. A model may also return the logits tensor alone.
 */
export function forwardBatch(model: Module, batch: unknown, computeLossFunc: ComputeLossFunc | null, style: CallStyle = "batch"): StepOutput {
  if (!batch || typeof batch !== "object" || Array.isArray(batch) || batch instanceof Tensor) {
    throw new TypeError("Trainer: a batch must be an object such as { inputIds, labels } (the model's one argument); give a dataCollator that builds one");
  }
  const labels = (batch as { labels?: unknown }).labels;
  if (labels !== undefined && !(labels instanceof Tensor)) throw new TypeError("Trainer: batch.labels must be a tensor");
  let inputs = batch;
  if (computeLossFunc && labels !== undefined) {
    const { labels: _dropped, ...rest } = batch as Record<string, unknown>;
    inputs = rest;
  }
  let outputs: unknown;
  if (style === "inputIds") {
    const { inputIds, ...rest } = inputs as Record<string, unknown>;
    if (!(inputIds instanceof Tensor)) throw new TypeError(`Trainer: ${model.constructor.name} takes (inputIds, { attentionMask, labels, … }); the batch has no inputIds tensor (it has ${Object.keys(inputs).join(", ")})`);
    outputs = model.call(inputIds, rest);
  } else outputs = model.call(inputs);
  let loss: Tensor | null = null;
  let logits: Tensor | null = null;
  if (outputs instanceof Tensor) logits = outputs;
  else if (outputs && typeof outputs === "object") {
    const o = outputs as { loss?: unknown; logits?: unknown };
    if (o.loss instanceof Tensor) loss = o.loss;
    if (o.logits instanceof Tensor) logits = o.logits;
  } else throw new TypeError(`Trainer: the model returned ${typeof outputs}; expected { loss, logits } or a logits tensor`);
  if (computeLossFunc && labels !== undefined) loss = computeLossFunc(outputs, labels);
  const size = logits ? logits.shape[0] : labels instanceof Tensor ? labels.shape[0] : 0;
  return { loss, logits, labels: (labels as Tensor | undefined) ?? null, size };
}
