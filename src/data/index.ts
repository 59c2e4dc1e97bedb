/**
 * torch.utils.data for ringtorch: datasets, samplers, collate and the DataLoader.
 *
 *   const loader = new data.DataLoader(new data.TensorDataset(x, y), { batchSize: 64, shuffle: true });
 *   for await (const [xb, yb] of loader) { ... }
 */
export { Dataset, TensorDataset, Subset, randomSplit, type GatherPlan } from "./dataset.js";
export { SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler, type Sampler, type BatchSamplerLike, type RandomSamplerOptions } from "./sampler.js";
export { defaultCollate } from "./collate.js";
export { DataLoader, type DataLoaderOptions, type Collated } from "./dataloader.js";
export { IterableDataset, getWorkerInfo, type WorkerInfo } from "./iterable_dataset.js";
export { randperm } from "./permutation.js";
export { readIdx, parseIdx, type IdxData } from "./idx.js";
export { DistributedSampler, type DistributedSamplerOptions, type DistributedSamplerState } from "./distributed_sampler.js";
export { readTextChunks, readLines, readTextLines } from "./text_lines.js";
export { readJsonl, loadJsonl } from "./jsonl.js";
export { readCsv, loadCsv, type CsvOptions } from "./csv.js";
export { readParquet, type ParquetOptions } from "./parquet.js";
export { readAlpaca, alpacaPrompt, checkAlpacaRecord, type AlpacaRecord } from "./alpaca.js";
export { ListDataset, mapAsync, filterAsync } from "./list_dataset.js";
export { padSequence, type PadSequenceOptions } from "./pad_sequence.js";
export { DataCollatorWithPadding, DataCollatorForLanguageModeling, type TextFeature, type TextBatch, type PaddingCollatorOptions } from "./collators.js";
export { packSequences, packSequencesAsync, type PackOptions } from "./packing.js";
export * as prepare from "./prepare/index.js";
