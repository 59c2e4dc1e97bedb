/**
 * Packing for causal language modelling (transformers' group_texts): token sequences are joined
 * (an end-of-text id after each, if given) and cut into blocks of exactly blockSize tokens; the
 * last partial block is dropped. No padding is ever needed, and a stream of any length packs in
 * constant memory.
 */
import { checkOptions } from "../util/options.js";

export interface PackOptions {
  blockSize: number;
  /** Appended after every sequence (GPT-2's <|endoftext|>), so documents stay apart. */
  eosId?: number;
}

function check(options: PackOptions): void {
  checkOptions("packSequences", options, ["blockSize", "eosId"]);
  if (!Number.isInteger(options?.blockSize) || options.blockSize < 1) throw new RangeError(`packSequences: blockSize must be a positive integer, got ${options?.blockSize}`);
}

/** Collects ids and hands out full blocks; the buffer never holds more than a block plus one sequence. */
class Packer {
  private buf: number[] = [];
  constructor(private readonly options: PackOptions) {}
  *add(s: readonly number[]): Generator<number[]> {
    const { blockSize, eosId } = this.options;
    for (const id of s) this.buf.push(id);
    if (eosId !== undefined) this.buf.push(eosId);
    let start = 0;
    for (; this.buf.length - start >= blockSize; start += blockSize) yield this.buf.slice(start, start + blockSize);
    if (start > 0) this.buf = this.buf.slice(start);
  }
}

/** Blocks of blockSize ids from sequences of ids. */
export function* packSequences(sequences: Iterable<readonly number[]>, options: PackOptions): Generator<number[]> {
  check(options);
  const p = new Packer(options);
  for (const s of sequences) yield* p.add(s);
}

/** packSequences over an async stream (token ids of a file read line by line). */
export async function* packSequencesAsync(sequences: AsyncIterable<readonly number[]> | Iterable<readonly number[]>, options: PackOptions): AsyncGenerator<number[]> {
  check(options);
  const p = new Packer(options);
  for await (const s of sequences) yield* p.add(s);
}
