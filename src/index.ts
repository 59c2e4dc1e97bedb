/**
 * ringtorch: PyTorch's training stack for Node.js.
 *
 *   import { tensor, nn, optim, data, dist, checkpoint } from "ringtorch";
 */
import "./wiring.js";

export * from "./ops/index.js";
export { Tensor } from "./tensor/tensor.js";
export type { DType, TypedArray } from "./tensor/dtype.js";
export { Generator, manualSeed, defaultGenerator, getRngState, setRngState, type GeneratorState } from "./tensor/random.js";
export { memoryPool } from "./tensor/storage.js";
export type { ArenaPolicy, ArenaStats } from "./tensor/arena.js";
export { getBackend, setBackend, backendName, withBackend } from "./backend/index.js";
export { setNumThreads, getNumThreads } from "./backend/num_threads.js";
export { noGrad, enableGrad, isGradEnabled, setGradEnabled, inferenceMode, isInferenceModeEnabled } from "./autograd/grad_mode.js";
export * as autograd from "./autograd/index.js";
export * as nn from "./nn/index.js";
export * as optim from "./optim/index.js";
export * as data from "./data/index.js";
export * as text from "./text/index.js";
export * as metrics from "./metrics/index.js";
export * as serialization from "./serialization/index.js";
export { save, load } from "./serialization/object.js";
export * as dist from "./distributed/index.js";
export * as checkpoint from "./checkpoint/index.js";
export * as track from "./track/index.js";
export { record, recordError, spawn, multiprocessing, SpawnContext, ProcessException, ProcessRaisedException, ProcessExitedException, type SpawnOptions } from "./launch/index.js";
export { DistributedDataParallel, DistributedDataParallel as DDP, type DistributedDataParallelOptions } from "./parallel/ddp.js";
export * as parallel from "./parallel/index.js";
export * as fsdp from "./parallel/fsdp/index.js";
export { fullyShard, FullyShardedDataParallel, FullyShardedDataParallel as FSDP, ShardingStrategy, type FullyShardedDataParallelOptions } from "./parallel/fsdp/index.js";
export * as trainer from "./trainer/index.js";
export { Trainer, TrainingArguments, EarlyStoppingCallback } from "./trainer/index.js";
export * as models from "./models/index.js";
