/**
 * torch.nn for ringtorch: Module and Parameter, layers, losses, init and utils.
 *
 *   import { nn } from "ringtorch";
 *   const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10));
 */
import "../ops/index.js";

export { Module, type ForwardHook, type ForwardPreHook, type RemovableHandle, type StateDict, type LoadResult } from "./module.js";
export { Parameter } from "./parameter.js";
export { deepCopy } from "./copy.js";
export { Sequential, ModuleList, ModuleDict } from "./containers.js";
export { ParameterList, ParameterDict } from "./parameter_containers.js";
export { Flatten, Unflatten } from "./flatten.js";
export { Linear, Identity, type LinearOptions } from "./linear.js";
export { Embedding, type EmbeddingOptions } from "./embedding.js";
export { LayerNorm, type LayerNormOptions } from "./layer_norm.js";
export { Conv1d, Conv2d, type ConvOptions } from "./conv.js";
export { MaxPool2d, AvgPool2d, AdaptiveAvgPool2d } from "./pooling.js";
export { BatchNorm1d, BatchNorm2d, BatchNormBase, type BatchNormOptions } from "./batch_norm.js";
export { SyncBatchNorm, type SyncBatchNormOptions } from "./sync_batch_norm.js";
export { GroupNorm, type GroupNormOptions } from "./group_norm.js";
export { Dropout } from "./dropout.js";
export { ReLU, GELU, Tanh, Sigmoid, SiLU, Softmax, LogSoftmax } from "./activation.js";
export { MultiheadAttention, type MultiheadAttentionOptions, type MultiheadAttentionCallOptions } from "./multihead_attention.js";
export { TransformerEncoderLayer, TransformerEncoder, type EncoderCallOptions } from "./transformer_encoder.js";
export { TransformerDecoderLayer, TransformerDecoder, type DecoderCallOptions } from "./transformer_decoder.js";
export { Transformer, type TransformerOptions, type TransformerCallOptions } from "./transformer.js";
export type { TransformerLayerOptions, Activation } from "./transformer_common.js";
export { CrossEntropyLoss, MSELoss, type CrossEntropyLossOptions } from "./loss.js";
export { NLLLoss, BCELoss, BCEWithLogitsLoss, type NLLLossOptions, type BCELossOptions, type BCEWithLogitsLossOptions } from "./probability_losses.js";
export { generateSquareSubsequentMask } from "./attention.js";
export * as init from "./init.js";
export * as functional from "./functional.js";
export * as utils from "./utils/index.js";
export { DataParallel, type DataParallelOptions } from "./data_parallel/data_parallel.js";
export type { DataParallelProfile, ThreadProfile } from "./data_parallel/profile.js";
