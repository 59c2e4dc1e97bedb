import type { Module } from "../nn/module.js";
import { clipGradNorm } from "../nn/utils/clip_grad.js";
import type { AnyOptimizer as Optimizer, LRScheduler } from "../optim/lr_scheduler.js";
import { DistributedDataParallel } from "../parallel/ddp.js";
import { FullyShardedDataParallel, type ShardingStrategyName } from "../parallel/fsdp/fsdp_module.js";
import { loadShardedStateDict, shardedStateDict } from "../parallel/fsdp/state_dict.js";
import { moduleWrapPolicy, lambdaAutoWrapPolicy, sizeBasedAutoWrapPolicy, type AutoWrapPolicy } from "../parallel/fsdp/wrap_policy.js";
import { load as loadCheckpoint } from "../checkpoint/load.js";
import type { FsdpOption, TrainingArguments } from "./training_arguments.js";

const STRATEGY: Record<FsdpOption, ShardingStrategyName> = {
  full_shard: "FULL_SHARD",
  shard_grad_op: "SHARD_GRAD_OP",
  no_shard: "NO_SHARD",
  hybrid_shard: "HYBRID_SHARD",
};

/**
 * The model as the Trainer drives it on this process: plain on one process, wrapped in DDP or
 * FSDP under ringrun. It hides the three differences the loop has to care about: how micro-batches
 * skip gradient synchronisation, how the global gradient norm is taken (FSDP's shards each hold a
 * part of it), and where the weights live in a checkpoint (FSDP writes each rank's shards).
 */
export class ParallelModel {
  /** What training calls: the wrapper (DDP's forward is where it prepares its buckets). */
  readonly forwardModule: Module;
  private readonly ddp: DistributedDataParallel | null;
  private readonly fsdp: FullyShardedDataParallel | null;

  constructor(
    readonly model: Module,
    args: TrainingArguments,
    worldSize: number,
  ) {
    this.ddp = null;
    this.fsdp = null;
    if (worldSize > 1 && args.fsdp) {
      const config = args.fsdpConfig;
      checkClassNames(model, config.transformerLayerClsToWrap);
      const policy = wrapPolicy(config);
      this.fsdp = new FullyShardedDataParallel(model, {
        shardingStrategy: STRATEGY[args.fsdp],
        syncModuleStates: config.syncModuleStates ?? true,
        ...(policy ? { autoWrapPolicy: policy } : {}),
      });
    } else if (worldSize > 1) {
      this.ddp = new DistributedDataParallel(model, {
        ...(args.ddpBucketCapMb !== null ? { bucketCapMb: args.ddpBucketCapMb } : {}),
        findUnusedParameters: args.ddpFindUnusedParameters,
      });
    }
    this.forwardModule = this.ddp ?? this.fsdp ?? model;
  }

  get isSharded(): boolean {
    return this.fsdp !== null;
  }

  /** Runs a micro-batch's forward and backward without synchronising gradients (they accumulate locally). */
  noSync<T>(fn: () => T): T {
    if (this.ddp) return this.ddp.noSync(fn);
    if (this.fsdp) return this.fsdp.noSync(fn);
    return fn();
  }

  /** Clips the gradients' global 2-norm and returns it, before clipping. */
  clipGradNorm(maxNorm: number): number {
    return (this.fsdp ? this.fsdp.clipGradNorm(maxNorm) : clipGradNorm(this.model.parameters(), maxNorm)).item();
  }

  /**
   * The checkpoint.save state and options for the weights and optimizer: replicated state for a
   * plain or DDP model (rank 0 writes it), each rank's shards for FSDP.
   */
  checkpointState(optimizer: Optimizer): { state: Record<string, unknown>; sharded?: Record<string, unknown> } {
    if (!this.fsdp) return { state: { model: this.model, optimizer } };
    return { state: {}, sharded: shardedStateDict(this.model, optimizer as never) };
  }

  /**
   * Loads the weights (and the optimizer's state, when given) of a checkpoint written by
   * checkpointState. The scheduler sets each group's learning rate on its next step only, so a
   * sharded optimizer, whose groups are not in the checkpoint, takes the scheduler's last rates.
   */
  loadCheckpoint(path: string, rank: number, optimizer?: Optimizer, scheduler?: LRScheduler): void {
    if (this.fsdp) {
      loadShardedStateDict(this.model, path, optimizer ? { optimizer: optimizer as never } : {});
      if (optimizer && scheduler) {
        const lrs = scheduler.getLastLr();
        optimizer.paramGroups.forEach((g, i) => ((g as { lr: number }).lr = lrs[i]));
      }
      return;
    }
    const saved = loadCheckpoint(path, { rank }).state;
    if (!saved.model) throw new Error(`Trainer: ${path} holds no model state; was it saved by a Trainer with fsdp? (then train with the same fsdp option)`);
    this.model.loadStateDict(saved.model as never);
    if (optimizer) optimizer.loadStateDict(saved.optimizer as never);
  }
}

/** A class name that matches no submodule would silently leave the whole model one unit. */
function checkClassNames(model: Module, classes: TrainingArguments["fsdpConfig"]["transformerLayerClsToWrap"]): void {
  const present = new Set([...model.modules()].map((m) => m.constructor.name));
  for (const c of classes ?? []) {
    if (typeof c === "string" && !present.has(c)) {
      throw new Error(`Trainer: fsdpConfig.transformerLayerClsToWrap names "${c}", but the model has no submodule of that class (it has ${[...present].join(", ")})`);
    }
  }
}

function wrapPolicy(config: TrainingArguments["fsdpConfig"]): AutoWrapPolicy | null {
  if (config.minNumParams !== undefined) return sizeBasedAutoWrapPolicy({ minNumParams: config.minNumParams });
  const classes = config.transformerLayerClsToWrap;
  if (!classes) return null;
  const names = new Set(classes.filter((c): c is string => typeof c === "string"));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const types = classes.filter((c): c is abstract new (...args: any[]) => Module => typeof c === "function");
  const byType = types.length ? moduleWrapPolicy(types) : null;
  return lambdaAutoWrapPolicy((m) => names.has(m.constructor.name) || (byType?.(m, "", 0) ?? false));
}
