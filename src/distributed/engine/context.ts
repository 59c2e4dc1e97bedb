import type { Link } from "./link.js";
import { type Piece, copyPiece } from "./piece.js";

/** Worker-owned temporary buffers, handed out per operation and reused by the next one. */
export class Scratch {
  private pool: Uint8Array[] = [];
  private used = 0;

  take(bytes: number): Uint8Array {
    const i = this.used++;
    const have = this.pool[i];
    if (have && have.byteLength >= bytes) return have.subarray(0, bytes);
    // 8-byte multiples keep float64 views aligned; keep some headroom so sizes that creep up reuse it.
    const buf = new Uint8Array(new ArrayBuffer(Math.ceil((bytes * 1.25 + 64) / 8) * 8));
    this.pool[i] = buf;
    return buf.subarray(0, bytes);
  }

  /** A scratch copy of `src` laid out contiguously. */
  copyOf(src: Piece): Piece {
    const buf = this.take(src.bytes);
    const p = { buf, byteOffset: 0, bytes: src.bytes };
    copyPiece(p, src);
    return p;
  }

  reset(): void {
    this.used = 0;
  }

  /** Drops buffers so that a one-off huge operation does not pin its memory for good. */
  trim(keepBytes: number): void {
    this.pool = this.pool.filter((b) => b.byteLength <= keepBytes);
  }
}

/** What an algorithm needs to know about the group and the data it runs on. */
export interface GroupContext {
  link: Link;
  /** Group size and this process's rank within the group. */
  size: number;
  rank: number;
  /** Global rank of each group rank. */
  ranks: readonly number[];
  /** Native dtype and reduction codes, and the element size in bytes. */
  dtype: number;
  op: number;
  elem: number;
  scratch: Scratch;
  /**
   * An all-reduce's average divisor (1: none). Each algorithm applies it in the reduction that
   * completes an element, so an average costs no pass of its own.
   */
  divisor: number;
  /** Size of the pieces a large message is cut into when an algorithm pipelines it. */
  pipelineBytes: number;
}

export function peer(ctx: GroupContext, groupRank: number): number {
  return ctx.ranks[((groupRank % ctx.size) + ctx.size) % ctx.size]!;
}

export function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

export function largestPowerOfTwo(n: number): number {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
