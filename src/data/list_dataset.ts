import { Generator } from "../tensor/random.js";
import { checkOptions } from "../util/options.js";
import { Dataset } from "./dataset.js";
import { randperm } from "./permutation.js";

/**
 * Records held in memory, with Hugging Face datasets' chainable map/filter/shuffle/
 * trainTestSplit (each returns a new dataset; seeds make shuffles reproducible).
 *
 *   const ds = await data.ListDataset.fromAsync(data.readJsonl("reviews.jsonl"));
 *   const { train, test } = ds.map(tokenize).trainTestSplit({ testSize: 0.1, seed: 0 });
 */
export class ListDataset<T> extends Dataset<T> {
  constructor(readonly items: readonly T[]) {
    super();
    if (!Array.isArray(items)) throw new TypeError(`ListDataset: expected an array of records, got ${typeof items}`);
  }
  static async fromAsync<T>(source: AsyncIterable<T> | Iterable<T>): Promise<ListDataset<T>> {
    const out: T[] = [];
    for await (const x of source) out.push(x);
    return new ListDataset(out);
  }
  get length(): number {
    return this.items.length;
  }
  getItem(index: number): T {
    const i = index < 0 ? index + this.items.length : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.items.length) throw new RangeError(`ListDataset: index ${index} is out of range for ${this.items.length} records`);
    return this.items[i];
  }
  [Symbol.iterator](): Iterator<T> {
    return this.items[Symbol.iterator]();
  }
  map<U>(fn: (item: T, index: number) => U): ListDataset<U> {
    return new ListDataset(this.items.map(fn));
  }
  filter(fn: (item: T, index: number) => boolean): ListDataset<T> {
    return new ListDataset(this.items.filter(fn));
  }
  select(indices: Iterable<number>): ListDataset<T> {
    return new ListDataset(Array.from(indices, (i) => this.getItem(i)));
  }
  shuffle(options: { seed?: number } = {}): ListDataset<T> {
    checkOptions("ListDataset.shuffle", options, ["seed"]);
    const perm = randperm(this.items.length, new Generator(options.seed ?? 0));
    return this.select(perm);
  }
  /**
   * A shuffled split (shuffle: false keeps the order): testSize is a fraction (0..1) or a count;
   * the test part gets ceil(fraction × n) records, as Hugging Face's train_test_split.
   */
  trainTestSplit(options: { testSize: number; seed?: number; shuffle?: boolean }): { train: ListDataset<T>; test: ListDataset<T> } {
    checkOptions("ListDataset.trainTestSplit", options, ["testSize", "seed", "shuffle"]);
    const n = this.items.length;
    const { testSize } = options;
    const nTest = testSize > 0 && testSize < 1 ? Math.ceil(testSize * n) : testSize;
    if (!Number.isInteger(nTest) || nTest < 0 || nTest > n) throw new RangeError(`ListDataset.trainTestSplit: testSize must be a fraction in (0, 1) or a count up to ${n}, got ${testSize}`);
    const order = options.shuffle === false ? Array.from({ length: n }, (_, i) => i) : Array.from(randperm(n, new Generator(options.seed ?? 0)));
    return { train: this.select(order.slice(0, n - nTest)), test: this.select(order.slice(n - nTest)) };
  }
}

/** Lazily maps an async stream (a reader's records) without holding it in memory. */
export async function* mapAsync<T, U>(source: AsyncIterable<T> | Iterable<T>, fn: (item: T) => U | Promise<U>): AsyncGenerator<U> {
  for await (const x of source) yield await fn(x);
}

/** Lazily filters an async stream. */
export async function* filterAsync<T>(source: AsyncIterable<T> | Iterable<T>, fn: (item: T) => boolean | Promise<boolean>): AsyncGenerator<T> {
  for await (const x of source) if (await fn(x)) yield x;
}
