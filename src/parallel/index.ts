export { DistributedDataParallel, DistributedDataParallel as DDP, type DistributedDataParallelOptions } from "./ddp.js";
export { GradBucket, type CommHook, type CommHookFuture, type LaunchRecord } from "./reducer.js";
export type { DdpComm, CommWork } from "./comm.js";
export * as commHooks from "./comm_hooks.js";
export { allReduceSum, allReduceMean, globalAccuracy, rank0First } from "./metrics.js";
export { DataParallel, type DataParallelOptions } from "../nn/data_parallel/data_parallel.js";
export * as fsdp from "./fsdp/index.js";
export { fullyShard, FullyShardedDataParallel, FullyShardedDataParallel as FSDP, ShardingStrategy } from "./fsdp/index.js";
export { ZeroRedundancyOptimizer, type ZeroRedundancyOptimizerOptions } from "./zero.js";
