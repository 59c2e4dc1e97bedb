import type { Tensor } from "../tensor/tensor.js";
import { formatShape } from "../tensor/shape.js";
import { checkArity, checkOptions } from "../util/options.js";
import { BatchNormBase, type BatchNormOptions } from "./batch_norm.js";
import { Module } from "./module.js";

/**
 * How nn reaches the process group without importing the distributed layer (which sits below it):
 * src/wiring.ts installs this. `worldSize` is undefined when no process group is initialised.
 */
export interface CrossRankLink {
  worldSize(group: unknown): number | undefined;
  /** A blocking all-reduce (SUM) of `values` in place over `group` (the default group when undefined). */
  allReduceSum(values: Float64Array, group: unknown): void;
}

let link: CrossRankLink | null = null;

export function setCrossRankLink(l: CrossRankLink): void {
  link = l;
}

export interface SyncBatchNormOptions extends BatchNormOptions {
  /** The ranks whose batches are normalised together (a dist ProcessGroup); every rank by default. */
  processGroup?: unknown;
}

/**
 * Batch norm whose batch statistics are those of the whole batch over every rank of the process
 * group (torch.nn.SyncBatchNorm): each forward all-reduces [Σx, Σx², count] per channel once, and
 * each backward [Σg, Σg·(x − mean)] once, so ranks may hold batches of different sizes. The weight
 * and bias gradients are each rank's own share, which DDP then averages, as in PyTorch. Without an
 * initialised process group, or with one rank, or in eval mode, it is plain batch norm.
 * Every rank of the group must run each training forward and backward (they are collectives).
 */
export class SyncBatchNorm extends BatchNormBase {
  processGroup: unknown;

  constructor(numFeatures: number, options: SyncBatchNormOptions = {}) {
    checkArity("SyncBatchNorm", arguments, 2, "new nn.SyncBatchNorm(numFeatures, { eps, momentum, affine, trackRunningStats, processGroup })");
    checkOptions("SyncBatchNorm", options, ["eps", "momentum", "affine", "trackRunningStats", "dtype", "processGroup"]);
    const { processGroup, ...rest } = options;
    super("SyncBatchNorm", numFeatures, rest);
    this.processGroup = processGroup;
  }

  protected override checkInput(x: Tensor): void {
    if (x.ndim < 2) throw new RangeError(`SyncBatchNorm: expected an input of at least 2 dims [N, C, ...], got shape ${formatShape(x.shape)}`);
    if (x.shape[1] !== this.numFeatures) throw new RangeError(`SyncBatchNorm: expected ${this.numFeatures} channels (dim 1), got shape ${formatShape(x.shape)}`);
  }

  override forward(x: Tensor): Tensor {
    const batchStats = this.training || this.running_mean === null;
    const size = link?.worldSize(this.processGroup);
    if (!batchStats || size === undefined || size <= 1) return this.normalize(x, null);
    const group = this.processGroup;
    const l = link!;
    return this.normalize(x, (values) => l.allReduceSum(values, group));
  }

  /**
   * Replaces every BatchNorm1d/2d inside `module` (or `module` itself) with a SyncBatchNorm that
   * shares its parameters and buffers (torch.nn.SyncBatchNorm.convert_sync_batchnorm); returns the
   * converted module.
   */
  static convertSyncBatchnorm<M extends Module>(module: M, processGroup?: unknown): M | SyncBatchNorm {
    checkArity("SyncBatchNorm.convertSyncBatchnorm", arguments, 2, "nn.SyncBatchNorm.convertSyncBatchnorm(module, processGroup?)");
    if (!(module instanceof Module)) throw new TypeError(`SyncBatchNorm.convertSyncBatchnorm: expected a Module, got ${module === null ? "null" : typeof module}`);
    if (module instanceof BatchNormBase && !(module instanceof SyncBatchNorm)) {
      const sync = new SyncBatchNorm(module.numFeatures, {
        eps: module.eps, momentum: module.momentum, affine: module.affine, trackRunningStats: module.trackRunningStats, processGroup,
        dtype: module.weight?.dtype === "float64" || module.running_mean?.dtype === "float64" ? "float64" : "float32",
      });
      sync.weight = module.weight;
      sync.bias = module.bias;
      sync.running_mean = module.running_mean;
      sync.running_var = module.running_var;
      sync.num_batches_tracked = module.num_batches_tracked;
      sync.training = module.training;
      return sync;
    }
    for (const [name, child] of [...module.namedChildren()]) {
      const converted = SyncBatchNorm.convertSyncBatchnorm(child, processGroup);
      if (converted === child) continue;
      const setter = (module as unknown as { set?: (k: string, v: Module) => unknown }).set;
      if (typeof setter === "function" && !Object.prototype.hasOwnProperty.call(module, name)) setter.call(module, name, converted);
      else (module as unknown as Record<string, Module>)[name] = converted;
    }
    return module;
  }
}
