import { Generator } from "../tensor/random.js";
import { randperm } from "./permutation.js";
import { checkArity, checkOptions } from "../util/options.js";

export interface DistributedSamplerOptions {
  /** Number of ranks sharing the dataset (default: the process group's world size, else WORLD_SIZE, else 1). */
  numReplicas?: number;
  /** This process's rank (default: the process group's rank, else RANK, else 0). */
  rank?: number;
  /** Shuffle with a generator seeded by seed + epoch, identically on every rank (default true, false in evaluation). */
  shuffle?: boolean;
  seed?: number;
  /** Drop the tail so every rank gets the same count, instead of padding with repeated indices. */
  dropLast?: boolean;
  /**
   * Evaluation mode: every sample goes to exactly one rank, with no padding and nothing dropped,
   * so ranks may differ by one sample and a distributed metric equals the one-process metric.
   */
  evaluation?: boolean;
}

export interface DistributedSamplerState {
  epoch: number;
  seed: number;
  /** Samples of this epoch already consumed by this rank (to resume mid-epoch). */
  startIndex: number;
}

function fromEnv(name: string, fallback: number): number {
  const v = process.env[name];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : fallback;
}

/**
 * Splits dataset indices between ranks (torch.utils.data.DistributedSampler): rank r takes
 * positions r, r+R, r+2R, … of the (shuffled, padded or trimmed) index list. Call `setEpoch`
 * before each epoch so that every epoch shuffles differently, yet identically on all ranks.
 */
export class DistributedSampler implements Iterable<number> {
  readonly numReplicas: number;
  readonly rank: number;
  readonly shuffle: boolean;
  readonly seed: number;
  readonly dropLast: boolean;
  readonly evaluation: boolean;
  private readonly datasetLength: number;
  private epoch = 0;
  private startIndex = 0;

  constructor(dataset: { length: number } | number, options: DistributedSamplerOptions = {}) {
    checkArity("DistributedSampler", arguments, 2, "new data.DistributedSampler(dataset, { numReplicas, rank, shuffle, seed, dropLast, evaluation })");
    checkOptions("DistributedSampler", options, ["numReplicas", "rank", "shuffle", "seed", "dropLast", "evaluation"]);
    this.datasetLength = typeof dataset === "number" ? dataset : dataset.length;
    if (!Number.isInteger(this.datasetLength) || this.datasetLength < 0) {
      throw new TypeError(`DistributedSampler: the dataset must have a non-negative integer length, got ${this.datasetLength}`);
    }
    this.numReplicas = options.numReplicas ?? defaultWorld.worldSize() ?? fromEnv("WORLD_SIZE", 1);
    this.rank = options.rank ?? defaultWorld.rank() ?? fromEnv("RANK", 0);
    if (!Number.isInteger(this.numReplicas) || this.numReplicas < 1) {
      throw new RangeError(`DistributedSampler: numReplicas must be a positive integer, got ${this.numReplicas}`);
    }
    if (!Number.isInteger(this.rank) || this.rank < 0 || this.rank >= this.numReplicas) {
      throw new RangeError(`DistributedSampler: invalid rank ${this.rank}, rank should be in the interval [0, ${this.numReplicas - 1}]`);
    }
    this.evaluation = options.evaluation ?? false;
    this.shuffle = options.shuffle ?? !this.evaluation;
    this.seed = options.seed ?? 0;
    this.dropLast = options.dropLast ?? false;
    if (this.evaluation && this.dropLast) throw new Error("DistributedSampler: evaluation mode keeps every sample; it cannot be combined with dropLast");
  }

  /** Samples this rank draws per epoch (before any mid-epoch resume offset). */
  get numSamples(): number {
    const n = this.datasetLength;
    const r = this.numReplicas;
    if (this.evaluation) return Math.max(0, Math.ceil((n - this.rank) / r));
    if (this.dropLast && n % r !== 0) return Math.ceil((n - r) / r);
    return Math.ceil(n / r);
  }

  get totalSize(): number {
    return this.evaluation ? this.datasetLength : this.numSamples * this.numReplicas;
  }

  get length(): number {
    return Math.max(0, this.numSamples - this.startIndex);
  }

  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new RangeError(`DistributedSampler.setEpoch: expected a non-negative integer, got ${epoch}`);
    if (epoch !== this.epoch) this.startIndex = 0;
    this.epoch = epoch;
  }

  getEpoch(): number {
    return this.epoch;
  }

  /** Skips the first n samples of this rank's share of the current epoch (resume mid-epoch). */
  setStartIndex(n: number): void {
    if (!Number.isInteger(n) || n < 0 || n > this.numSamples) {
      throw new RangeError(`DistributedSampler.setStartIndex: expected an integer in [0, ${this.numSamples}], got ${n}`);
    }
    this.startIndex = n;
  }

  stateDict(): DistributedSamplerState {
    return { epoch: this.epoch, seed: this.seed, startIndex: this.startIndex };
  }

  loadStateDict(state: DistributedSamplerState): void {
    if (state.seed !== this.seed) {
      throw new Error(`DistributedSampler.loadStateDict: the saved seed ${state.seed} differs from this sampler's ${this.seed}; the resumed order would not match`);
    }
    this.setEpoch(state.epoch);
    this.setStartIndex(state.startIndex);
  }

  /** The full ordered index list of this epoch, before it is split between ranks. */
  epochIndices(): number[] {
    const n = this.datasetLength;
    const indices = this.shuffle ? Array.from(randperm(n, new Generator(this.seed + this.epoch))) : Array.from({ length: n }, (_, i) => i);
    if (this.evaluation) return indices;
    const total = this.totalSize;
    if (this.dropLast) return indices.slice(0, total);
    const padded = indices.slice();
    while (padded.length < total && n > 0) padded.push(...indices.slice(0, total - padded.length));
    return padded;
  }

  /** This rank's indices for the current epoch, from the resume offset on. */
  indices(): number[] {
    const all = this.epochIndices();
    const mine: number[] = [];
    for (let i = this.rank; i < all.length; i += this.numReplicas) mine.push(all[i]);
    return mine.slice(this.startIndex);
  }

  [Symbol.iterator](): Iterator<number> {
    return this.indices()[Symbol.iterator]();
  }
}

/**
 * Where the sampler learns the default rank and world size. The distributed layer registers the
 * process group here when it initialises (the data layer must not import it).
 */
export const defaultWorld = {
  rank: (): number | undefined => undefined,
  worldSize: (): number | undefined => undefined,
};
