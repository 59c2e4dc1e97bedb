import type { Module } from "../../nn/module.js";
import { clipToTotalNorm, finishNorm, normPart, type ClipGradNormOptions } from "../../nn/utils/clip_grad.js";
import { tensor } from "../../ops/creation.js";
import type { Tensor } from "../../tensor/tensor.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { statesUnder } from "./tree.js";

/**
 * clipGradNorm for a fully sharded model: the norm is over the whole model's gradients, not this
 * rank's shards. Each rank sums |g|^p over its shards (padding holds no gradient), one all-reduce
 * over the shard group adds the shares (max for p = ∞), and every rank scales its shards by the
 * same factor. Replicas (HYBRID_SHARD, NO_SHARD) hold equal gradients and are not added again.
 * Returns the total norm before clipping, as torch.nn.utils.clip_grad_norm_ does.
 */
export function clipGradNorm(module: Module, maxNorm: number, options: ClipGradNormOptions = {}): Tensor {
  const where = "fsdp.clipGradNorm";
  checkArity(where, arguments, 3, "fsdp.clipGradNorm(model, maxNorm, { normType, errorIfNonfinite })");
  checkOptions(where, options, ["normType", "errorIfNonfinite", "foreach"]);
  const p = options.normType ?? 2;
  if (!(p > 0)) throw new RangeError(`${where}: normType must be positive (or Infinity), got ${p}`);
  if (!(maxNorm >= 0)) throw new RangeError(`${where}: maxNorm must be a non-negative number, got ${maxNorm}`);
  const states = statesUnder(module, where);
  const grads = states.flatMap((s) => s.unit.params.flatMap((fp) => (fp.shard.grad && fp.shard.numel > 0 ? [fp.shard.grad] : [])));
  const share = tensor([normPart(grads, p)], { dtype: "float64" });
  const comm = states[0].comm;
  if (comm.shardSize > 1) {
    states[0].unit.counts.allReduce++;
    comm.allReduce(share, p === Infinity ? "max" : "sum");
  }
  return clipToTotalNorm(grads, finishNorm(share.item(), p), maxNorm, p, options.errorIfNonfinite ?? false);
}
