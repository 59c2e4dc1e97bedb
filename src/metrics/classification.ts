import { checkOptions } from "../util/options.js";
import { CountMetric, toLabels } from "./metric.js";
import type { Tensor } from "../tensor/tensor.js";

type Labels = readonly number[] | Int32Array | Tensor;

function pairUp(preds: Labels, targets: Labels, where: string): [number[], number[]] {
  const p = toLabels(preds, `${where} (predictions)`);
  const t = toLabels(targets, `${where} (targets)`);
  if (p.length !== t.length) throw new RangeError(`${where}: ${p.length} predictions but ${t.length} targets`);
  return [p, t];
}

/** Fraction of predictions equal to the target (sklearn's accuracy_score). */
export class Accuracy extends CountMetric<number> {
  constructor() {
    super(2);
  }
  update(preds: Labels, targets: Labels): this {
    const [p, t] = pairUp(preds, targets, "Accuracy.update");
    p.forEach((x, i) => (this.counts[0] += x === t[i] ? 1 : 0));
    this.counts[1] += p.length;
    return this;
  }
  fromCounts([correct, total]: readonly number[]): number {
    return total === 0 ? 0 : correct / total;
  }
}

export interface PRFOptions {
  /** "binary" scores posLabel only (default); "macro" averages per class; "micro" pools counts. */
  average?: "binary" | "macro" | "micro";
  /** Classes are 0..numClasses-1 (needed for macro and micro; binary takes 2). */
  numClasses?: number;
  posLabel?: number;
}

export interface PRF {
  precision: number;
  recall: number;
  f1: number;
}

/**
 * Precision, recall and F1 (sklearn's precision_recall_fscore_support with zero_division=0) from
 * per-class true positive, false positive and false negative counts. Macro averages over the
 * classes present in targets or predictions on any rank, as sklearn does over labels seen.
 */
export class PrecisionRecallF1 extends CountMetric<PRF> {
  readonly average: "binary" | "macro" | "micro";
  readonly numClasses: number;
  readonly posLabel: number;
  constructor(options: PRFOptions = {}) {
    checkOptions("PrecisionRecallF1", options, ["average", "numClasses", "posLabel"]);
    const numClasses = options.numClasses ?? 2;
    if (!Number.isInteger(numClasses) || numClasses < 2) throw new RangeError(`PrecisionRecallF1: numClasses must be an integer >= 2, got ${options.numClasses}`);
    super(3 * numClasses);
    this.average = options.average ?? "binary";
    this.numClasses = numClasses;
    this.posLabel = options.posLabel ?? 1;
    if (this.average === "binary" && numClasses !== 2) throw new RangeError(`PrecisionRecallF1: average "binary" needs 2 classes, got numClasses ${numClasses}; use average "macro" or "micro"`);
  }
  update(preds: Labels, targets: Labels): this {
    const [p, t] = pairUp(preds, targets, "PrecisionRecallF1.update");
    const c = this.numClasses;
    p.forEach((x, i) => {
      const y = t[i];
      for (const v of [x, y]) if (!Number.isInteger(v) || v < 0 || v >= c) throw new RangeError(`PrecisionRecallF1.update: label ${v} at position ${i} is outside 0..${c - 1}`);
      if (x === y) this.counts[3 * x] += 1;
      else {
        this.counts[3 * x + 1] += 1; // a false positive for the predicted class
        this.counts[3 * y + 2] += 1; // a false negative for the true class
      }
    });
    return this;
  }
  fromCounts(counts: readonly number[]): PRF {
    const prf = (tp: number, fp: number, fn: number): PRF => {
      const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
      const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
      const f1 = 2 * tp + fp + fn === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
      return { precision, recall, f1 };
    };
    const cls = (k: number) => [counts[3 * k], counts[3 * k + 1], counts[3 * k + 2]] as const;
    if (this.average === "binary") return prf(...cls(this.posLabel));
    const present = Array.from({ length: this.numClasses }, (_, k) => k).filter((k) => cls(k).some((v) => v > 0));
    if (this.average === "micro") {
      const sum = present.reduce((s, k) => s.map((v, j) => v + cls(k)[j]), [0, 0, 0]);
      return prf(sum[0], sum[1], sum[2]);
    }
    if (present.length === 0) return { precision: 0, recall: 0, f1: 0 };
    const each = present.map((k) => prf(...cls(k)));
    const mean = (f: (x: PRF) => number) => each.reduce((s, x) => s + f(x), 0) / each.length;
    return { precision: mean((x) => x.precision), recall: mean((x) => x.recall), f1: mean((x) => x.f1) };
  }
}
