import { Module } from "../../nn/module.js";
import type { ProcessGroup } from "../../distributed/process_group.js";
import type { ClipGradNormOptions } from "../../nn/utils/clip_grad.js";
import type { Tensor } from "../../tensor/tensor.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { clipGradNorm } from "./clip_grad.js";
import { type FsdpComm, fsdpCommFor } from "./comm.js";
import { fullyShard, type FullyShardOptions } from "./fully_shard.js";
import { hybridGroups } from "./mesh.js";
import type { MixedPrecisionPolicy } from "./mixed_precision.js";
import type { OffloadPolicy } from "./offload.js";
import { collectiveCounts, setRequiresGradientSync } from "./tree.js";
import { applyWrapPolicy, type AutoWrapPolicy } from "./wrap_policy.js";
import { runThenRestore } from "../../util/scoped.js";

/** FSDP1's sharding strategies, with the ZeRO stage each matches. */
export const ShardingStrategy = {
  /** ZeRO-3: parameters, gradients and optimizer state sharded; parameters freed after forward. */
  FULL_SHARD: "FULL_SHARD",
  /**
   * ZeRO-2: gradients and optimizer state sharded; parameters gathered once per step (before
   * forward) into memory that stays allocated, this rank's shard a view of its rows. With a
   * lowered paramDtype the gathered copy is freed after backward instead (FSDP2's behaviour).
   */
  SHARD_GRAD_OP: "SHARD_GRAD_OP",
  /** DDP: nothing sharded, gradients all-reduced. */
  NO_SHARD: "NO_SHARD",
  /** FULL_SHARD within each host (a block of ranks), replicated across hosts. */
  HYBRID_SHARD: "HYBRID_SHARD",
} as const;
export type ShardingStrategyName = keyof typeof ShardingStrategy;

export interface FullyShardedDataParallelOptions {
  shardingStrategy?: ShardingStrategyName;
  /** Which submodules become units of their own; the rest belong to the root unit. */
  autoWrapPolicy?: AutoWrapPolicy;
  mixedPrecision?: MixedPrecisionPolicy;
  /** Copy rank 0's parameters and buffers to every rank first. Default true (ranks may have initialised differently). */
  syncModuleStates?: boolean;
  /** The group to shard over (default: every rank; HYBRID_SHARD: the ranks of this host). */
  processGroup?: ProcessGroup;
  /** HYBRID_SHARD: the group to replicate over (default: the same local rank on every host). */
  replicateGroup?: ProcessGroup;
  /** Start the next unit's all-gather before this unit's forward. Default true (PyTorch's FSDP1: false; here the gather runs on the comm worker while this unit computes). */
  forwardPrefetch?: boolean;
  /** "BACKWARD_PRE" (default): start the next unit's all-gather before this unit's backward; null: gather each unit only when its backward starts. */
  backwardPrefetch?: "BACKWARD_PRE" | null;
  /** true (default): at most 2 units that are freed again within a pass gathered at once; false: no limit; or the number. */
  limitAllGathers?: boolean | number;
  /** Keep this rank's parameter shards, gradient shards and optimizer state in a memory-mapped file: { dir, params, grads, optimizerState, pageOut } (FULL_SHARD, HYBRID_SHARD). */
  offload?: OffloadPolicy;
  /** Replaces the process groups (tests count collectives through it). */
  comm?: FsdpComm;
}

const OPTIONS = [
  "shardingStrategy",
  "autoWrapPolicy",
  "mixedPrecision",
  "syncModuleStates",
  "processGroup",
  "replicateGroup",
  "forwardPrefetch",
  "backwardPrefetch",
  "limitAllGathers",
  "offload",
  "comm",
];

/**
 * Fully sharded data parallelism in FSDP1's spelling (torch.distributed.fsdp.FullyShardedDataParallel),
 * built on fullyShard: the wrap policy picks the units, each strategy is a choice of groups and of
 * reshardAfterForward. Parameter names gain the `module.` prefix, as DDP's do.
 *
 *   const model = new FSDP(net, { autoWrapPolicy: moduleWrapPolicy([Block]) });
 *   const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
 */
export class FullyShardedDataParallel<M extends Module = Module> extends Module {
  readonly module: M;
  readonly shardingStrategy: ShardingStrategyName;

  constructor(module: M, options: FullyShardedDataParallelOptions = {}) {
    super();
    const where = "FullyShardedDataParallel";
    checkArity(where, arguments, 2, "new FSDP(module, { shardingStrategy, autoWrapPolicy, mixedPrecision, … })");
    checkOptions(where, options, OPTIONS);
    if (!(module instanceof Module)) throw new TypeError(`${where}: expected an nn.Module to wrap`);
    const strategy = options.shardingStrategy ?? "FULL_SHARD";
    if (!(strategy in ShardingStrategy)) throw new TypeError(`${where}: shardingStrategy must be one of ${Object.keys(ShardingStrategy).join(", ")}, got ${JSON.stringify(strategy)}`);
    this.shardingStrategy = strategy;
    const zero2 = strategy === "SHARD_GRAD_OP";
    const lowered = options.mixedPrecision?.paramDtype === "bfloat16";
    const bp = options.backwardPrefetch === undefined ? "BACKWARD_PRE" : options.backwardPrefetch;
    if (bp !== "BACKWARD_PRE" && bp !== null) throw new TypeError(`${where}: backwardPrefetch must be "BACKWARD_PRE" or null, got ${JSON.stringify(bp)}`);
    const limit = options.limitAllGathers ?? true;
    const unitOptions: FullyShardOptions = {
      reshardAfterForward: !zero2,
      reshardAfterBackward: !(zero2 && !lowered),
      forwardPrefetch: options.forwardPrefetch ?? true,
      backwardPrefetch: bp !== null,
      limitAllGathers: limit === true ? 2 : limit === false ? Number.MAX_SAFE_INTEGER : limit,
      comm: options.comm ?? commOf(strategy, options),
      ...(options.mixedPrecision ? { mixedPrecision: options.mixedPrecision } : {}),
      syncModuleStates: options.syncModuleStates ?? true,
      ...(options.offload ? { offload: options.offload } : {}),
    };
    if (options.autoWrapPolicy) applyWrapPolicy(module, options.autoWrapPolicy, (m) => fullyShard(m, unitOptions));
    fullyShard(module, unitOptions);
    this.module = module;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override forward(...args: any[]): any {
    return this.module.call(...(args as Parameters<M["forward"]>));
  }

  /** Runs fn (forward and backward of micro-batches) with gradients accumulating unsharded and unsynchronised. */
  noSync<T>(fn: () => T): T {
    setRequiresGradientSync(this.module, false);
    const restore = () => setRequiresGradientSync(this.module, true);
    return runThenRestore(fn, restore);
  }

  /** The global gradient norm over every rank's shards, with one all-reduce; clips the shards. */
  clipGradNorm(maxNorm: number, options: ClipGradNormOptions = {}): Tensor {
    return clipGradNorm(this.module, maxNorm, options);
  }

  /** The collectives this model's units ran so far, by kind. */
  collectiveCounts(): { allGather: number; reduceScatter: number; allReduce: number } {
    return collectiveCounts(this.module);
  }
}

function commOf(strategy: ShardingStrategyName, options: FullyShardedDataParallelOptions): FsdpComm {
  if (strategy === "NO_SHARD") return fsdpCommFor("none", options.processGroup);
  if (strategy !== "HYBRID_SHARD") return fsdpCommFor(options.processGroup);
  if (options.processGroup && options.replicateGroup) return fsdpCommFor(options.processGroup, options.replicateGroup);
  if (options.processGroup || options.replicateGroup) throw new Error("FullyShardedDataParallel: HYBRID_SHARD takes both processGroup and replicateGroup, or neither (then hosts are LOCAL_WORLD_SIZE blocks)");
  const g = hybridGroups();
  return fsdpCommFor(g.shard, g.replicate);
}
