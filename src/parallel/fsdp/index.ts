export { fullyShard, fsdpStateOf, type FullyShardOptions } from "./fully_shard.js";
export { FullyShardedDataParallel, ShardingStrategy, type ShardingStrategyName, type FullyShardedDataParallelOptions } from "./fsdp_module.js";
export { moduleWrapPolicy, sizeBasedAutoWrapPolicy, lambdaAutoWrapPolicy, type AutoWrapPolicy } from "./wrap_policy.js";
export { clipGradNorm } from "./clip_grad.js";
export { setRequiresGradientSync, collectiveCounts, memoryStats, type FsdpMemoryStats } from "./tree.js";
export { fsdpCommFor, type FsdpComm } from "./comm.js";
export { hybridGroups, type HybridGroups } from "./mesh.js";
export type { MixedPrecisionPolicy } from "./mixed_precision.js";
export { shardedStateDict, loadShardedStateDict, fullStateDict, type ShardedState, type ShardMeta } from "./state_dict.js";
