/**
 * Evaluation metrics that reduce across ranks from integer counts (see metric.ts):
 *
 *   const f1 = new metrics.PrecisionRecallF1({ average: "macro", numClasses: 3 });
 *   f1.update(logits, labels);          // each rank, its own samples
 *   f1.compute().f1;                    // the same on every rank, equal to one process
 */
export { CountMetric, type ComputeOptions } from "./metric.js";
export { Accuracy, PrecisionRecallF1, type PRF, type PRFOptions } from "./classification.js";
export { BLEU, tokenize13a, type BleuScore } from "./bleu.js";
export { WordErrorRate, CharErrorRate, editDistance } from "./error_rate.js";
