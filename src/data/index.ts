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
