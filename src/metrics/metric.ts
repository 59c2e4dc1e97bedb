/**
 * Metrics kept as integer counts. compute() sums each count over all ranks (one small all-reduce)
 * before dividing, so with every sample on exactly one rank (an evaluation-mode
 * DistributedSampler) the distributed value equals the one-process value exactly: sums of
 * integers in float64 are exact below 2^53, whatever the order.
 */
import type { ProcessGroup } from "../distributed/process_group.js";
import { allReduceSum } from "../parallel/metrics.js";
import { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";

export interface ComputeOptions {
  /** Sum counts over the process group first (default true; one process is unaffected). */
  sync?: boolean;
  group?: ProcessGroup;
}

export abstract class CountMetric<R> {
  protected counts: number[];
  constructor(size: number) {
    this.counts = new Array<number>(size).fill(0);
  }
  /** The counts of this process (what compute sums across ranks). */
  state(): number[] {
    return [...this.counts];
  }
  reset(): void {
    this.counts.fill(0);
  }
  compute(options: ComputeOptions = {}): R {
    checkOptions(`${this.constructor.name}.compute`, options, ["sync", "group"]);
    const counts = options.sync === false ? this.state() : allReduceSum(this.counts, options.group);
    return this.fromCounts(counts);
  }
  /** The metric from (summed) counts. */
  abstract fromCounts(counts: readonly number[]): R;
}

/** Class indices from an array, a 1-D tensor, or a 2-D tensor of scores (argmax of each row). */
export function toLabels(v: readonly number[] | Int32Array | Tensor, where: string): number[] {
  if (v instanceof Tensor) {
    const d = Array.from(v.contiguous().data() as ArrayLike<number>);
    if (v.dim() === 1) return d;
    if (v.dim() !== 2) throw new RangeError(`${where}: expected class indices [N] or scores [N, C], got shape [${v.shape.join(", ")}]`);
    const [n, c] = v.shape;
    return Array.from({ length: n }, (_, i) => {
      let best = 0;
      for (let j = 1; j < c; j++) if (d[i * c + j] > d[i * c + best]) best = j;
      return best;
    });
  }
  if (!Array.isArray(v) && !(v instanceof Int32Array)) throw new TypeError(`${where}: expected an array of class indices or a tensor`);
  return Array.from(v);
}
