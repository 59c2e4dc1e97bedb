import { defaultGenerator } from "../tensor/random.js";
import { defaultCollate } from "./collate.js";

/**
 * A stream of samples (torch.utils.data.IterableDataset): override `[Symbol.iterator]()`. A
 * DataLoader batches the stream as it comes; it takes no sampler and no shuffle.
 *
 * With `numWorkers: n`, the DataLoader makes n iterators of the dataset, each seeing
 * `getWorkerInfo()` = { id, numWorkers, seed } while it runs, and takes batches from them in
 * turn (worker 0's first batch, worker 1's first, …), exactly PyTorch's order. A dataset that
 * ignores getWorkerInfo() is therefore seen n times, as in PyTorch; shard with it:
 *
 *   *[Symbol.iterator]() {
 *     const w = data.getWorkerInfo();
 *     for (let i = w?.id ?? 0; i < this.n; i += w?.numWorkers ?? 1) yield this.read(i);
 *   }
 *
 * The workers' iterators run on the main thread, interleaved (a JavaScript iterator cannot
 * cross threads); what is kept is PyTorch's sharding contract and batch order.
 */
export abstract class IterableDataset<T = unknown> implements Iterable<T> {
  abstract [Symbol.iterator](): Iterator<T>;
}

export interface WorkerInfo {
  id: number;
  numWorkers: number;
  /** The worker's seed: a base seed drawn once per epoch from the default generator, plus id (PyTorch's rule). */
  seed: bigint;
}

let current: WorkerInfo | null = null;

/** Inside an IterableDataset's iterator under a DataLoader with workers: which worker this is; null otherwise (torch's get_worker_info). */
export function getWorkerInfo(): WorkerInfo | null {
  return current;
}

export function isIterableDataset(d: unknown): d is IterableDataset {
  return d instanceof IterableDataset;
}

/** Runs fn with `info` visible to getWorkerInfo() (a generator's body runs inside next(), so each step needs it). */
function asWorker<R>(info: WorkerInfo | null, fn: () => R): R {
  const saved = current;
  current = info;
  try {
    return fn();
  } finally {
    current = saved;
  }
}

function nextAs<T>(info: WorkerInfo | null, it: Iterator<T>): IteratorResult<T> {
  return asWorker(info, () => it.next());
}

export interface IterableBatching<T, B> {
  batchSize: number | null;
  dropLast: boolean;
  numWorkers: number;
  collateFn: ((samples: T[]) => B) | null;
}

/** The batches of an IterableDataset: per worker, batchSize samples at a time; workers in turn. */
export function* iterableBatches<T, B>(dataset: IterableDataset<T>, o: IterableBatching<T, B>): Generator<B> {
  const n = Math.max(1, o.numWorkers);
  const base = o.numWorkers > 0 ? defaultGenerator.nextUint32() : 0;
  const workers = Array.from({ length: n }, (_, id) => {
    const info: WorkerInfo | null = o.numWorkers > 0 ? { id, numWorkers: n, seed: BigInt(base) + BigInt(id) } : null;
    return { info, it: asWorker(info, () => dataset[Symbol.iterator]()), done: false };
  });
  const collate = (samples: T[]): B => (o.collateFn ? o.collateFn(samples) : (defaultCollate(samples) as B));
  for (let live = n, w = 0; live > 0; w = (w + 1) % n) {
    const worker = workers[w];
    if (worker.done) continue;
    if (o.batchSize === null) {
      const r = nextAs(worker.info, worker.it);
      if (r.done) {
        worker.done = true;
        live--;
      } else yield r.value as unknown as B;
      continue;
    }
    const samples: T[] = [];
    while (samples.length < o.batchSize) {
      const r = nextAs(worker.info, worker.it);
      if (r.done) {
        worker.done = true;
        live--;
        break;
      }
      samples.push(r.value);
    }
    if (samples.length === o.batchSize || (samples.length > 0 && !o.dropLast)) yield collate(samples);
  }
}
