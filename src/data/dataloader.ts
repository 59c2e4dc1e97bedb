import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { defaultCollate } from "./collate.js";
import type { Dataset } from "./dataset.js";
import { GatherPool } from "./gather_pool.js";
import { checkArity, checkOptions } from "../util/options.js";
import { isIterableDataset, iterableBatches, type IterableDataset } from "./iterable_dataset.js";
import { tracedAsyncIterator, tracedIterator, tracing } from "../util/trace.js";
import { BatchSampler, RandomSampler, SequentialSampler, type BatchSamplerLike, type Sampler } from "./sampler.js";

/** What defaultCollate makes of a list of T. */
export type Collated<T> = T extends Tensor | number | boolean | Float32Array | Float64Array | Int32Array
  ? Tensor
  : T extends readonly unknown[]
    ? { [K in keyof T]: Collated<T[K]> }
    : T extends Record<string, unknown>
      ? { [K in keyof T]: Collated<T[K]> }
      : T[];

export interface DataLoaderOptions<T, B> {
  /** Samples per batch (default 1); null yields single samples, not collated. */
  batchSize?: number | null;
  /** Reshuffle every epoch (a RandomSampler over the dataset). */
  shuffle?: boolean;
  /** Where the indices come from (e.g. a DistributedSampler); excludes shuffle. */
  sampler?: Sampler;
  /** Yields whole batches of indices; excludes batchSize, shuffle, sampler and dropLast. */
  batchSampler?: BatchSamplerLike;
  collateFn?: (samples: T[]) => B;
  /** Drop the last batch when it is short. */
  dropLast?: boolean;
  /** The generator a shuffle draws from, for a reproducible order. */
  generator?: Generator;
  /**
   * Worker threads that gather batches during `for await` iteration, while the main thread
   * trains. They apply to datasets that offer a gatherPlan (TensorDataset, and Subsets of it)
   * with the default collate; other datasets build each batch on the main thread when it is asked for.
   */
  numWorkers?: number;
  /** Batches kept in flight per worker. */
  prefetchFactor?: number;
  /** Accepted for ported code; without a GPU there is no pinned memory, so it changes nothing (as in PyTorch on CPU). */
  pinMemory?: boolean;
  /** Accepted for ported code; worker threads here are cheap to start and live for one pass. */
  persistentWorkers?: boolean;
  /** How long the loop waits for a worker's batch before failing, in milliseconds (counted from when it starts waiting). */
  timeoutMs?: number;
}

const DATALOADER_OPTIONS = ["batchSize", "shuffle", "sampler", "batchSampler", "collateFn", "dropLast", "generator", "numWorkers", "prefetchFactor", "timeoutMs", "pinMemory", "persistentWorkers"];

function checkWorkers(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`DataLoader: numWorkers must be a non-negative integer, got ${n}`);
  return n;
}

/**
 * Batches of a dataset (torch.utils.data.DataLoader), map-style or an IterableDataset.
 *
 * `for (const batch of loader)` builds each batch when it is needed, on the main thread.
 * `for await (const batch of loader)` with numWorkers > 0 keeps numWorkers × prefetchFactor
 * batches in flight on worker threads, so the copy of the next batch's rows overlaps the
 * current training step. "Off the main thread" here means exactly that row copy: samplers,
 * index lists and the allocation of the batch tensors stay on the main thread (they are cheap),
 * and datasets of arbitrary JavaScript objects cannot cross threads at all, so they are built
 * on demand as in the synchronous loop.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class DataLoader<T = any, B = Collated<T>> implements Iterable<B>, AsyncIterable<B> {
  readonly dataset: Dataset<T>;
  readonly batchSize: number | null;
  readonly dropLast: boolean;
  readonly sampler: Sampler;
  readonly batchSampler: BatchSamplerLike | null;
  readonly collateFn: ((samples: T[]) => B) | null;
  readonly numWorkers: number;
  readonly prefetchFactor: number;
  readonly timeoutMs: number;
  private readonly iterable: IterableDataset<T> | null = null;

  constructor(dataset: Dataset<T> | IterableDataset<T>, options: DataLoaderOptions<T, B> = {}) {
    checkArity("DataLoader", arguments, 2, "new data.DataLoader(dataset, { batchSize, shuffle, sampler, numWorkers, … })");
    checkOptions("DataLoader", options, DATALOADER_OPTIONS);
    const batchSize = options.batchSize === undefined ? 1 : options.batchSize;
    if (isIterableDataset(dataset)) {
      if (options.shuffle || options.sampler || options.batchSampler) {
        throw new Error("DataLoader: an IterableDataset sets its own order; shuffle, sampler and batchSampler do not apply (shuffle inside the dataset's iterator)");
      }
      if (batchSize !== null && (!Number.isInteger(batchSize) || batchSize < 1)) throw new RangeError(`DataLoader: batchSize must be a positive integer or null, got ${batchSize}`);
      this.iterable = dataset;
      this.dataset = dataset as unknown as Dataset<T>;
      this.batchSize = batchSize;
      this.dropLast = options.dropLast ?? false;
      this.sampler = { length: NaN, [Symbol.iterator]: () => [][Symbol.iterator]() };
      this.batchSampler = null;
      this.collateFn = options.collateFn ?? null;
      this.numWorkers = checkWorkers(options.numWorkers ?? 0);
      this.prefetchFactor = options.prefetchFactor ?? 2;
      this.timeoutMs = options.timeoutMs ?? 60_000;
      return;
    }
    if (!dataset || typeof dataset.getItem !== "function" || typeof dataset.length !== "number") {
      throw new TypeError("DataLoader: expected a Dataset (an object with length and getItem(index)) or an IterableDataset");
    }
    this.dataset = dataset;
    if (options.batchSampler) {
      if (options.batchSize !== undefined || options.shuffle || options.sampler || options.dropLast) {
        throw new Error("DataLoader: batchSampler option is mutually exclusive with batchSize, shuffle, sampler and dropLast");
      }
    }
    if (options.sampler && options.shuffle) throw new Error("DataLoader: sampler option is mutually exclusive with shuffle; shuffle in the sampler instead");
    if (batchSize !== null && (!Number.isInteger(batchSize) || batchSize < 1)) throw new RangeError(`DataLoader: batchSize must be a positive integer or null, got ${batchSize}`);
    this.batchSize = options.batchSampler ? null : batchSize;
    this.dropLast = options.dropLast ?? false;
    this.sampler = options.sampler ?? (options.shuffle ? new RandomSampler(dataset, { generator: options.generator }) : new SequentialSampler(dataset));
    this.batchSampler = options.batchSampler ?? (batchSize !== null ? new BatchSampler(this.sampler, batchSize, this.dropLast) : null);
    this.collateFn = options.collateFn ?? null;
    this.numWorkers = options.numWorkers ?? 0;
    this.prefetchFactor = options.prefetchFactor ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    checkWorkers(this.numWorkers);
    if (!Number.isInteger(this.prefetchFactor) || this.prefetchFactor < 1) throw new RangeError(`DataLoader: prefetchFactor must be a positive integer, got ${this.prefetchFactor}`);
  }

  /** Batches per epoch (samples when batchSize is null). */
  get length(): number {
    if (this.iterable) {
      const n = (this.iterable as unknown as { length?: unknown }).length;
      if (typeof n !== "number") throw new TypeError("DataLoader: this IterableDataset has no length, so neither has its loader (as in PyTorch)");
      return this.batchSize === null ? n : this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
    }
    return this.batchSampler ? this.batchSampler.length : this.sampler.length;
  }

  [Symbol.iterator](): IterableIterator<B> {
    const batches = this.batches();
    return tracing.on ? tracedIterator(batches, "DataLoader.next") : batches;
  }

  private *batches(): IterableIterator<B> {
    if (this.iterable) {
      yield* iterableBatches<T, B>(this.iterable, this);
      return;
    }
    if (!this.batchSampler) {
      for (const i of this.sampler) yield this.dataset.getItem(i) as unknown as B;
      return;
    }
    for (const indices of this.batchSampler) yield this.fetch(indices);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<B> {
    const batches = this.asyncBatches();
    return tracing.on ? tracedAsyncIterator(batches, "DataLoader.next") : batches;
  }

  private async *asyncBatches(): AsyncIterableIterator<B> {
    if (this.iterable || this.numWorkers === 0 || !this.batchSampler || this.collateFn || typeof this.dataset.gatherPlan !== "function") {
      yield* this.batches();
      return;
    }
    const batches = this.batchSampler[Symbol.iterator]();
    const pool = new GatherPool(this.numWorkers);
    const queue: Promise<B>[] = [];
    const capacity = this.numWorkers * this.prefetchFactor;
    const fill = () => {
      while (queue.length < capacity) {
        const next = batches.next();
        if (next.done) break;
        const p = this.fetchAsync(next.value, pool);
        // Awaited in order later; until then a failure must not count as unhandled.
        p.catch(() => {});
        queue.push(p);
      }
    };
    try {
      fill();
      for (let index = 0; queue.length > 0; index++) {
        const batch = await pool.wait(queue.shift()!, this.timeoutMs, `batch ${index}`);
        fill();
        yield batch;
      }
    } finally {
      await pool.close();
    }
  }

  private fetchAsync(indices: number[], pool: GatherPool): Promise<B> {
    const plan = this.dataset.gatherPlan!(indices);
    return plan ? (pool.gather(plan) as Promise<unknown> as Promise<B>) : Promise.resolve(this.fetch(indices));
  }

  /** One batch: the dataset's own getBatch when the collate is the default, else collated items. */
  private fetch(indices: number[]): B {
    if (!this.collateFn && typeof this.dataset.getBatch === "function") {
      const batch = this.dataset.getBatch(indices);
      if (batch !== undefined) return batch as B;
    }
    const samples = indices.map((i) => this.dataset.getItem(i));
    return this.collateFn ? this.collateFn(samples) : (defaultCollate(samples) as B);
  }
}
