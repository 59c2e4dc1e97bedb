import type { DType } from "../tensor/dtype.js";
import { itemSize } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { zeros } from "../ops/creation.js";

export const MIB = 1024 * 1024;

/**
 * Groups parameter indices into buckets the way PyTorch's Reducer does: walking the parameters in
 * reverse registration order (roughly the order their gradients become ready in backward), one
 * open bucket per dtype, closing a bucket once it reaches its cap. The first bucket of each dtype
 * is capped at `firstCapBytes` (1 MiB) so that the first all-reduce starts early in backward.
 */
export function assignBuckets(params: readonly Tensor[], capBytes: number, firstCapBytes = MIB): number[][] {
  const buckets: number[][] = [];
  const open = new Map<DType, { indices: number[]; bytes: number; cap: number }>();
  const firstClosed = new Set<DType>();
  for (let i = params.length - 1; i >= 0; i--) {
    const p = params[i];
    let current = open.get(p.dtype);
    if (!current) {
      current = { indices: [], bytes: 0, cap: firstClosed.has(p.dtype) ? capBytes : Math.min(firstCapBytes, capBytes) };
      open.set(p.dtype, current);
    }
    current.indices.push(i);
    current.bytes += p.numel * itemSize(p.dtype);
    if (current.bytes >= current.cap) {
      buckets.push(current.indices);
      open.delete(p.dtype);
      firstClosed.add(p.dtype);
    }
  }
  for (const rest of open.values()) if (rest.indices.length > 0) buckets.push(rest.indices);
  return buckets;
}

/**
 * One bucket: the parameters whose gradients are reduced together. Its flat buffer, holding
 * their gradients back to back, exists only where something needs one (a communication hook,
 * gradientAsBucketView, a joined rank's zeros): by default the gradients are reduced where they lie.
 */
export class Bucket {
  readonly index: number;
  readonly paramIndices: readonly number[];
  readonly params: readonly Tensor[];
  readonly offsets: readonly number[];
  readonly numel: number;
  pending = 0;
  private flat: Tensor | null = null;

  constructor(index: number, paramIndices: readonly number[], allParams: readonly Tensor[]) {
    this.index = index;
    this.paramIndices = paramIndices;
    this.params = paramIndices.map((i) => allParams[i]);
    const offsets: number[] = [];
    let total = 0;
    for (const p of this.params) {
      offsets.push(total);
      total += p.numel;
    }
    this.offsets = offsets;
    this.numel = total;
  }

  /** The flat gradient buffer, allocated on first use. */
  get buffer(): Tensor {
    return (this.flat ??= zeros([this.numel], { dtype: this.params[0].dtype }));
  }

  /** The slice of the buffer that holds parameter j of this bucket, shaped like it. */
  gradView(j: number): Tensor {
    const p = this.params[j];
    return this.buffer.detach().narrow(0, this.offsets[j], p.numel).view(p.shape);
  }
}
