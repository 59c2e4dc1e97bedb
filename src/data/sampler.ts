import { defaultGenerator, Generator } from "../tensor/random.js";
import { randperm } from "./permutation.js";
import { checkArity, checkOptions } from "../util/options.js";

/**
 * Yields dataset indices (torch.utils.data.Sampler). `length` is how many one pass yields.
 * A sampler whose order depends on the epoch (DistributedSampler) has `setEpoch`, which the
 * training loop calls before each epoch, as in PyTorch.
 */
export interface Sampler extends Iterable<number> {
  readonly length: number;
  setEpoch?(epoch: number): void;
}

/** Yields lists of indices, one per batch (what DataLoader's batchSampler option takes). */
export interface BatchSamplerLike extends Iterable<number[]> {
  readonly length: number;
}

interface Sized {
  readonly length: number;
}

/** 0, 1, …, n−1 in order. */
export class SequentialSampler implements Sampler {
  constructor(private readonly dataSource: Sized) {
    checkArity("SequentialSampler", arguments, 1, "new data.SequentialSampler(dataset)");
  }

  get length(): number {
    return this.dataSource.length;
  }

  *[Symbol.iterator](): Iterator<number> {
    const n = this.dataSource.length;
    for (let i = 0; i < n; i++) yield i;
  }
}

export interface RandomSamplerOptions {
  /** Draw with replacement (numSamples may then exceed the dataset's length). */
  replacement?: boolean;
  numSamples?: number;
  /**
   * Draw from this generator, so that the order is reproducible and continues across epochs.
   * Without one, each pass seeds a fresh generator from the default generator (as PyTorch does).
   */
  generator?: Generator;
}

/** A random order of the indices, a fresh one on every pass (torch's RandomSampler). */
export class RandomSampler implements Sampler {
  readonly replacement: boolean;
  private readonly numSamplesOption: number | undefined;
  generator: Generator | undefined;

  constructor(private readonly dataSource: Sized, options: RandomSamplerOptions = {}) {
    checkArity("RandomSampler", arguments, 2, "new data.RandomSampler(dataset, { replacement, numSamples, generator })");
    checkOptions("RandomSampler", options, ["replacement", "numSamples", "generator"]);
    this.replacement = options.replacement ?? false;
    this.numSamplesOption = options.numSamples;
    this.generator = options.generator;
    if (this.numSamplesOption !== undefined && (!Number.isInteger(this.numSamplesOption) || this.numSamplesOption <= 0)) {
      throw new RangeError(`RandomSampler: numSamples must be a positive integer, got ${this.numSamplesOption}`);
    }
  }

  get length(): number {
    return this.numSamplesOption ?? this.dataSource.length;
  }

  *[Symbol.iterator](): Iterator<number> {
    const n = this.dataSource.length;
    const g = this.generator ?? new Generator(defaultGenerator.nextUint32());
    const total = this.length;
    if (this.replacement) {
      for (let i = 0; i < total; i++) yield g.randint(0, n);
      return;
    }
    for (let done = 0; done < total; ) {
      const perm = randperm(n, g);
      for (let i = 0; i < n && done < total; i++, done++) yield perm[i];
    }
  }
}

/** A random order of the given indices (torch's SubsetRandomSampler). */
export class SubsetRandomSampler implements Sampler {
  readonly indices: readonly number[];
  generator: Generator | undefined;

  constructor(indices: ArrayLike<number>, options: { generator?: Generator } = {}) {
    checkArity("SubsetRandomSampler", arguments, 2, "new data.SubsetRandomSampler(indices, { generator })");
    checkOptions("SubsetRandomSampler", options, ["generator"]);
    this.indices = Array.from(indices);
    this.generator = options.generator;
  }

  get length(): number {
    return this.indices.length;
  }

  *[Symbol.iterator](): Iterator<number> {
    const g = this.generator ?? new Generator(defaultGenerator.nextUint32());
    for (const i of randperm(this.indices.length, g)) yield this.indices[i];
  }
}

/** Groups a sampler's indices into batches of batchSize; the last may be short unless dropLast. */
export class BatchSampler implements BatchSamplerLike {
  constructor(
    readonly sampler: Iterable<number> & { readonly length: number },
    readonly batchSize: number,
    readonly dropLast = false,
  ) {
    checkArity("BatchSampler", arguments, 3, "new data.BatchSampler(sampler, batchSize, dropLast)");
    if (typeof dropLast !== "boolean") throw new TypeError(`BatchSampler: dropLast must be a boolean, got ${typeof dropLast}`);
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`BatchSampler: batchSize must be a positive integer, got ${batchSize}`);
  }

  get length(): number {
    const n = this.sampler.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }

  *[Symbol.iterator](): Iterator<number[]> {
    let batch: number[] = [];
    for (const i of this.sampler) {
      batch.push(i);
      if (batch.length === this.batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0 && !this.dropLast) yield batch;
  }
}
