// The small Transformer's loss as a module class, for bench/dataparallel.ts's DataParallel with a criterion
// (a worker thread rebuilds it from this file: DataParallel's `classes` option).
import { nn, type Tensor } from "../../src/index.js";

/** Cross-entropy over every position of [N, S, C] logits against [N, S] class indices (mean). */
export class TokenCrossEntropy extends nn.Module {
  override forward(logits: Tensor, target: Tensor): Tensor {
    return nn.functional.crossEntropy(logits.reshape(-1, logits.shape[logits.ndim - 1]!), target.reshape(-1));
  }
}
