import type { DType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { batchNormWith, type CrossRankSum } from "../ops/batch_norm.js";
import { ones, zeros } from "../ops/creation.js";
import { formatShape } from "../tensor/shape.js";
import { noGrad } from "../autograd/grad_mode.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface BatchNormOptions {
  eps?: number;
  /** Weight of each new batch in the running statistics; null keeps a cumulative average instead. */
  momentum?: number | null;
  /** Learn a per-channel scale and shift. */
  affine?: boolean;
  /** Keep running statistics as buffers and use them in eval mode. */
  trackRunningStats?: boolean;
  dtype?: DType;
}

export const BATCH_NORM_KEYS = ["eps", "momentum", "affine", "trackRunningStats", "dtype"];

/**
 * The shared part of BatchNorm1d/2d and SyncBatchNorm (torch.nn.modules.batchnorm._BatchNorm).
 * Members carry PyTorch's state-dict names: weight, bias, running_mean, running_var and
 * num_batches_tracked (int32 here, int64 in PyTorch).
 */
export abstract class BatchNormBase extends Module {
  readonly numFeatures: number;
  readonly eps: number;
  momentum: number | null;
  readonly affine: boolean;
  readonly trackRunningStats: boolean;
  weight: Parameter | null;
  bias: Parameter | null;
  declare running_mean: Tensor | null;
  declare running_var: Tensor | null;
  declare num_batches_tracked: Tensor | null;

  constructor(where: string, numFeatures: number, options: BatchNormOptions, extraKeys: readonly string[] = []) {
    super();
    checkOptions(where, options, [...BATCH_NORM_KEYS, ...extraKeys]);
    if (!Number.isInteger(numFeatures) || numFeatures < 1) throw new RangeError(`${where}: numFeatures must be a positive integer, got ${numFeatures}`);
    const momentum = options.momentum === undefined ? 0.1 : options.momentum;
    if (momentum !== null && (typeof momentum !== "number" || !(momentum >= 0 && momentum <= 1))) {
      throw new RangeError(`${where}: momentum must be a number in [0, 1] or null (cumulative average), got ${JSON.stringify(momentum)}`);
    }
    this.numFeatures = numFeatures;
    this.eps = options.eps ?? 1e-5;
    this.momentum = momentum;
    this.affine = options.affine ?? true;
    this.trackRunningStats = options.trackRunningStats ?? true;
    const dtype = options.dtype ?? "float32";
    this.weight = this.affine ? new Parameter(ones([numFeatures], { dtype })) : null;
    this.bias = this.affine ? new Parameter(zeros([numFeatures], { dtype })) : null;
    const track = this.trackRunningStats;
    this.registerBuffer("running_mean", track ? zeros([numFeatures], { dtype }) : null);
    this.registerBuffer("running_var", track ? ones([numFeatures], { dtype }) : null);
    this.registerBuffer("num_batches_tracked", track ? zeros([], { dtype: "int32" }) : null);
  }

  get runningMean(): Tensor | null {
    return this.running_mean;
  }

  get runningVar(): Tensor | null {
    return this.running_var;
  }

  get numBatchesTracked(): Tensor | null {
    return this.num_batches_tracked;
  }

  resetRunningStats(): void {
    noGrad(() => {
      this.running_mean?.zero_();
      this.running_var?.fill_(1);
      this.num_batches_tracked?.zero_();
    });
  }

  resetParameters(): void {
    this.resetRunningStats();
    noGrad(() => {
      this.weight?.fill_(1);
      this.bias?.zero_();
    });
  }

  /** Throws unless x has a rank this layer accepts. */
  protected abstract checkInput(x: Tensor): void;

  /** batch norm as PyTorch's _BatchNorm.forward runs it, summing statistics with `across` when given. */
  protected normalize(x: Tensor, across: CrossRankSum | null): Tensor {
    this.checkInput(x);
    let factor = this.momentum ?? 0;
    if (this.training && this.trackRunningStats && this.num_batches_tracked) {
      const tracked = noGrad(() => this.num_batches_tracked!.add_(1));
      if (this.momentum === null) factor = 1 / Number(tracked.item());
    }
    const useRunning = !this.training || this.trackRunningStats;
    return batchNormWith(
      x,
      useRunning ? this.running_mean : null,
      useRunning ? this.running_var : null,
      { weight: this.weight, bias: this.bias, training: this.training || this.running_mean === null, momentum: factor, eps: this.eps },
      across,
    );
  }

  override forward(x: Tensor): Tensor {
    return this.normalize(x, null);
  }

  override extraRepr(): string {
    return `${this.numFeatures}, eps=${this.eps}, momentum=${this.momentum}, affine=${this.affine}, track_running_stats=${this.trackRunningStats}`;
  }
}

/** Batch norm over [N, C] or [N, C, L] inputs (torch.nn.BatchNorm1d). */
export class BatchNorm1d extends BatchNormBase {
  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    checkArity("BatchNorm1d", arguments, 2, "new nn.BatchNorm1d(numFeatures, { eps, momentum, affine, trackRunningStats })");
    super("BatchNorm1d", numFeatures, options);
  }

  protected override checkInput(x: Tensor): void {
    if (x.ndim !== 2 && x.ndim !== 3) throw new RangeError(`BatchNorm1d: expected a 2-d or 3-d input [N, C(, L)], got shape ${formatShape(x.shape)}`);
    if (x.shape[1] !== this.numFeatures) throw new RangeError(`BatchNorm1d: expected ${this.numFeatures} channels (dim 1), got shape ${formatShape(x.shape)}`);
  }
}

/** Batch norm over [N, C, H, W] inputs (torch.nn.BatchNorm2d). */
export class BatchNorm2d extends BatchNormBase {
  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    checkArity("BatchNorm2d", arguments, 2, "new nn.BatchNorm2d(numFeatures, { eps, momentum, affine, trackRunningStats })");
    super("BatchNorm2d", numFeatures, options);
  }

  protected override checkInput(x: Tensor): void {
    if (x.ndim !== 4) throw new RangeError(`BatchNorm2d: expected a 4-d input [N, C, H, W], got shape ${formatShape(x.shape)}`);
    if (x.shape[1] !== this.numFeatures) throw new RangeError(`BatchNorm2d: expected ${this.numFeatures} channels (dim 1), got shape ${formatShape(x.shape)}`);
  }
}
