import { CountMetric } from "./metric.js";

/** Levenshtein distance between two sequences (insertions, deletions, substitutions cost 1). */
export function editDistance<T>(a: readonly T[], b: readonly T[]): number {
  let prev = new Int32Array(b.length + 1);
  let cur = new Int32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/**
 * Error rate = total edit distance / total reference length, over the corpus (as jiwer and
 * torchmetrics compute WER and CER): the counts are the two sums.
 */
abstract class ErrorRate extends CountMetric<number> {
  constructor(private readonly split: (s: string) => string[]) {
    super(2);
  }
  update(predictions: readonly string[] | string, references: readonly string[] | string): this {
    const p = typeof predictions === "string" ? [predictions] : predictions;
    const r = typeof references === "string" ? [references] : references;
    if (p.length !== r.length) throw new RangeError(`${this.constructor.name}.update: ${p.length} predictions but ${r.length} references`);
    p.forEach((x, i) => {
      const ref = this.split(r[i]);
      this.counts[0] += editDistance(this.split(x), ref);
      this.counts[1] += ref.length;
    });
    return this;
  }
  fromCounts([errors, total]: readonly number[]): number {
    return total === 0 ? 0 : errors / total;
  }
}

/** Word error rate: words split on whitespace. */
export class WordErrorRate extends ErrorRate {
  constructor() {
    super((s) => s.split(/\s+/u).filter((w) => w.length > 0));
  }
}

/** Character error rate over Unicode characters (code points). */
export class CharErrorRate extends ErrorRate {
  constructor() {
    super((s) => Array.from(s));
  }
}
