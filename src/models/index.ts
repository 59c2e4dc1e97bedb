/**
 * Pretrained Transformer models by Hugging Face's names and files: GPT-2 and BERT, built from a
 * config.json, loading and saving model.safetensors.
 *
 *   import { models } from "ringtorch";
 *   const gpt = models.GPT2LMHeadModel.fromPretrained("./gpt2");
 */
export { GPT2Model, GPT2LMHeadModel, causalLmLoss, type GPT2Options, type GPT2ForwardOptions, type GPT2LMForwardOptions, type LayerCache, type CacheRoom } from "./gpt2.js";
export { BertModel, BertForSequenceClassification, type BertOptions, type BertForwardOptions, type BertClassifierForwardOptions } from "./bert.js";
export { readConfig, type HfConfig } from "./config.js";
export { generate, pickToken, type GenerateOptions } from "./generate.js";
export { gpt2Settings, type GPT2Settings } from "./gpt2_settings.js";
export { bertSettings, type BertSettings } from "./bert_settings.js";
