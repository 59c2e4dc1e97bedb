import { indexSelect } from "../ops/indexing.js";
import { defaultGenerator, Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import { Tensor } from "../tensor/tensor.js";
import { randperm } from "./permutation.js";
import { checkArity, checkOptions } from "../util/options.js";

/**
 * A map-style dataset (torch.utils.data.Dataset): a length and an item per index.
 *
 * A dataset may also offer `getBatch(indices)`, returning what the default collate would make of
 * those items, in one step (TensorDataset gathers rows instead of stacking one view per sample),
 * and `gatherPlan(indices)`, naming tensors whose rows are the samples, so that a DataLoader with
 * workers can copy the rows on a worker thread.
 */
export abstract class Dataset<T = unknown> {
  abstract get length(): number;
  abstract getItem(index: number): T;
  getBatch?(indices: readonly number[]): unknown;
  gatherPlan?(indices: readonly number[]): GatherPlan | null;
}

/** Batch tensor k is made of rows `rows` of `tensors[k]` (each contiguous, first dim = samples). */
export interface GatherPlan {
  tensors: Tensor[];
  rows: Int32Array;
}

function checkIndex(index: number, length: number, where: string): number {
  const i = index < 0 ? index + length : index;
  if (!Number.isInteger(i) || i < 0 || i >= length) throw new RangeError(`${where}: index ${index} is out of range for a dataset of ${length} items`);
  return i;
}

/** Samples are the rows of tensors that share their first dim (torch's TensorDataset); items are arrays of tensors. */
export class TensorDataset extends Dataset<Tensor[]> {
  readonly tensors: Tensor[];

  constructor(...tensors: Tensor[]) {
    super();
    if (tensors.length === 0) throw new RangeError("TensorDataset: expected at least one tensor");
    tensors.forEach((t, i) => {
      if (!(t instanceof Tensor)) throw new TypeError(`TensorDataset: argument ${i} is not a Tensor`);
      if (t.ndim === 0 || t.shape[0] !== tensors[0].shape[0]) {
        throw new RangeError(`TensorDataset: every tensor needs the same first dim (the samples); tensor 0 has shape ${formatShape(tensors[0].shape)}, tensor ${i} ${formatShape(t.shape)}`);
      }
    });
    this.tensors = tensors;
  }

  get length(): number {
    return this.tensors[0].shape[0];
  }

  getItem(index: number): Tensor[] {
    const i = checkIndex(index, this.length, "TensorDataset");
    return this.tensors.map((t) => t.select(0, i));
  }

  override getBatch(indices: readonly number[]): Tensor[] {
    const rows = Int32Array.from(indices, (i) => checkIndex(i, this.length, "TensorDataset"));
    return this.tensors.map((t) => indexSelect(t, 0, rows));
  }

  override gatherPlan(indices: readonly number[]): GatherPlan | null {
    if (!this.tensors.every((t) => t.isContiguous() && t.storage.data.buffer instanceof SharedArrayBuffer)) return null;
    return { tensors: this.tensors, rows: Int32Array.from(indices, (i) => checkIndex(i, this.length, "TensorDataset")) };
  }
}

/** The items of `dataset` at `indices`, in that order (torch's Subset). */
export class Subset<T> extends Dataset<T> {
  readonly dataset: Dataset<T>;
  readonly indices: readonly number[];

  constructor(dataset: Dataset<T>, indices: ArrayLike<number>) {
    super();
    this.dataset = dataset;
    this.indices = Array.from(indices);
  }

  get length(): number {
    return this.indices.length;
  }

  getItem(index: number): T {
    return this.dataset.getItem(this.indices[checkIndex(index, this.length, "Subset")]);
  }

  private mapped(indices: readonly number[]): number[] {
    return indices.map((i) => this.indices[checkIndex(i, this.length, "Subset")]);
  }

  override getBatch(indices: readonly number[]): unknown {
    if (!this.dataset.getBatch) return undefined;
    return this.dataset.getBatch(this.mapped(indices));
  }

  override gatherPlan(indices: readonly number[]): GatherPlan | null {
    return this.dataset.gatherPlan ? this.dataset.gatherPlan(this.mapped(indices)) : null;
  }
}

/**
 * Splits a dataset into non-overlapping random subsets (torch.utils.data.random_split). Lengths
 * are counts summing to the dataset's length, or fractions summing to 1 (the remainder of the
 * rounding goes one by one to the first subsets, as PyTorch does).
 */
export function randomSplit<T>(dataset: Dataset<T>, lengths: readonly number[], generator: Generator | { generator?: Generator } = defaultGenerator): Subset<T>[] {
  checkArity("randomSplit", arguments, 3, "randomSplit(dataset, lengths, generator)");
  // PyTorch's keyword `generator=g` ports as { generator: g }.
  if (!(generator instanceof Generator)) {
    checkOptions("randomSplit", generator, ["generator"]);
    generator = generator?.generator ?? defaultGenerator;
  }
  const n = dataset.length;
  let counts = [...lengths];
  const isFractions = counts.reduce((a, b) => a + b, 0) <= 1 + 1e-9 && counts.some((c) => !Number.isInteger(c) || c < 1) && counts.every((c) => c >= 0 && c <= 1);
  if (isFractions) {
    if (Math.abs(counts.reduce((a, b) => a + b, 0) - 1) > 1e-6) throw new RangeError(`randomSplit: fractions must sum to 1, got ${lengths.join(" + ")}`);
    counts = counts.map((f) => Math.floor(n * f));
    let remainder = n - counts.reduce((a, b) => a + b, 0);
    for (let i = 0; remainder > 0; i = (i + 1) % counts.length, remainder--) counts[i]++;
  }
  if (counts.some((c) => !Number.isInteger(c) || c < 0) || counts.reduce((a, b) => a + b, 0) !== n) {
    throw new RangeError(`randomSplit: the lengths ${JSON.stringify(lengths)} must be non-negative integers summing to the dataset's length ${n}, or fractions summing to 1`);
  }
  const order = randperm(n, generator);
  let offset = 0;
  return counts.map((c) => {
    const part = new Subset(dataset, order.subarray(offset, offset + c));
    offset += c;
    return part;
  });
}
