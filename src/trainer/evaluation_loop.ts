import { noGrad } from "../autograd/grad_mode.js";
import { DataLoader } from "../data/dataloader.js";
import type { Dataset } from "../data/dataset.js";
import { DistributedSampler } from "../data/distributed_sampler.js";
import type { Module } from "../nn/module.js";
import { autocast } from "../ops/autocast.js";
import { cat } from "../ops/join.js";
import { allReduceSum } from "../parallel/metrics.js";
import type { Tensor } from "../tensor/tensor.js";
import { gatherInDatasetOrder } from "./gather_eval.js";
import { forwardBatch, type CallStyle, type ComputeLossFunc, type EvalPrediction } from "./model_io.js";

export interface LoopResult extends EvalPrediction {
  /** The mean loss per sample over the whole dataset, or null when the batches had no labels. */
  loss: number | null;
  numSamples: number;
}

export interface LoopSetup {
  model: Module;
  batchSize: number;
  collateFn?: (samples: unknown[]) => unknown;
  computeLossFunc: ComputeLossFunc | null;
  callStyle: CallStyle;
  rank: number;
  worldSize: number;
  /**
   * Every rank runs as many forwards as the rank with the most batches (a rank with fewer repeats
   * its last batch and drops the result): needed when the forward itself communicates (FSDP).
   */
  lockstep?: boolean;
  /** Run the forwards under autocast("bfloat16"), as training did. */
  bf16?: boolean;
}

/**
 * Runs the model over a dataset without gradients. Each rank takes its share from an
 * evaluation-mode DistributedSampler (every sample exactly once, nothing padded), runs the plain
 * model (not its DDP wrapper: ranks may run different numbers of batches, and DDP's forward
 * would wait on the others), and the predictions and labels are gathered in dataset order. The
 * loss is the sample-weighted mean of the batch losses, summed over ranks in float64.
 */
export function evaluationLoop(dataset: Dataset<unknown>, s: LoopSetup): LoopResult {
  const sampler = new DistributedSampler(dataset, { evaluation: true, numReplicas: s.worldSize, rank: s.rank });
  const loader = new DataLoader(dataset, { batchSize: s.batchSize, sampler, ...(s.collateFn ? { collateFn: s.collateFn } : {}) });
  const logits: Tensor[] = [];
  const labels: Tensor[] = [];
  let lossSum = 0;
  let lossSamples = 0;
  let samples = 0;
  const wasTraining = s.model.training;
  const run = (batch: unknown) => () => forwardBatch(s.model, batch, s.computeLossFunc, s.callStyle);
  const forward = (batch: unknown) => (s.bf16 ? autocast("bfloat16", run(batch)) : run(batch)());
  // Evaluation-mode shares differ by at most one sample: the longest is ceil(N / R) samples.
  const mostBatches = Math.ceil(Math.ceil(dataset.length / s.worldSize) / s.batchSize);
  s.model.eval();
  try {
    noGrad(() => {
      let last: unknown = null;
      let batches = 0;
      for (const batch of loader) {
        last = batch;
        batches++;
        const out = forward(batch);
        if (out.loss) {
          lossSum += out.loss.item() * out.size;
          lossSamples += out.size;
        }
        if (out.logits) logits.push(out.logits.detach());
        if (out.labels) labels.push(out.labels);
        samples += out.size;
      }
      if (s.lockstep && batches < mostBatches) {
        if (last === null) throw new Error(`Trainer: rank ${s.rank} has no evaluation samples (${dataset.length} samples on ${s.worldSize} ranks); a sharded model needs at least one sample per rank`);
        for (; batches < mostBatches; batches++) forward(last);
      }
    });
  } finally {
    s.model.train(wasTraining);
  }
  const [sum, n, total] = allReduceSum([lossSum, lossSamples, samples]);
  if (logits.length === 0) {
    throw new Error(`Trainer: rank ${s.rank} got no logits from its evaluation batches (${samples} samples); the model must return { logits } or a logits tensor, and the dataset needs at least one sample per rank`);
  }
  const predictions = gatherInDatasetOrder(cat(logits, 0), s.rank, s.worldSize);
  const labelIds = labels.length ? gatherInDatasetOrder(cat(labels, 0), s.rank, s.worldSize) : null;
  return { predictions, labelIds, loss: n > 0 ? sum / n : null, numSamples: total };
}

