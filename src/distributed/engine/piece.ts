import type { TypedArray } from "../dtypes.js";

/**
 * A byte range of a typed array; offsets are relative to the array's own start. With `buf` null
 * the offset is an address (an AddressRef's memory), which only native code may touch.
 */
export interface Piece {
  buf: TypedArray | null;
  byteOffset: number;
  bytes: number;
}

/**
 * One message whose bytes lie in several places, in stream order: a coalesced all-reduce moves
 * DDP's gradients where they lie instead of packing them into one buffer first. A span of one
 * piece is an ordinary contiguous message.
 */
export type Span = readonly Piece[];

export function piece(buf: TypedArray, byteOffset = 0, bytes = buf.byteLength - byteOffset): Piece {
  return { buf, byteOffset, bytes };
}

/**
 * Cuts `whole` into `parts` blocks of whole elements, block i covering elements
 * [floor(i*n/parts), floor((i+1)*n/parts)): sizes differ by at most one element.
 */
export function splitPiece(whole: Piece, parts: number, elemBytes: number): Piece[] {
  const n = whole.bytes / elemBytes;
  const out: Piece[] = [];
  for (let i = 0; i < parts; i++) {
    const lo = Math.floor((i * n) / parts);
    const hi = Math.floor(((i + 1) * n) / parts);
    out.push({ buf: whole.buf, byteOffset: whole.byteOffset + lo * elemBytes, bytes: (hi - lo) * elemBytes });
  }
  return out;
}

/** Cuts `whole` into consecutive chunks of at most `chunkBytes` (at least one chunk, maybe empty). */
export function chunkPiece(whole: Piece, chunkBytes: number, elemBytes: number): Piece[] {
  const step = Math.max(elemBytes, chunkBytes - (chunkBytes % elemBytes));
  const out: Piece[] = [];
  for (let off = 0; off < whole.bytes || out.length === 0; off += step) {
    out.push({ buf: whole.buf, byteOffset: whole.byteOffset + off, bytes: Math.min(step, whole.bytes - off) });
  }
  return out;
}

/** Joins pieces that sit back to back in one array, so that a range of blocks travels as one message. */
export function mergeAdjacent(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last && last.buf === p.buf && last.byteOffset + last.bytes === p.byteOffset) {
      out[out.length - 1] = { buf: last.buf, byteOffset: last.byteOffset, bytes: last.bytes + p.bytes };
    } else {
      out.push(p);
    }
  }
  return out;
}

export function bytesOf(p: Piece): Uint8Array {
  if (!p.buf) throw new Error("internal: memory given by address cannot be read on the comm worker");
  return new Uint8Array(p.buf.buffer, p.buf.byteOffset + p.byteOffset, p.bytes);
}

export function copyPiece(dst: Piece, src: Piece): void {
  if (dst.bytes !== src.bytes) throw new Error(`internal: copy of ${src.bytes} bytes into ${dst.bytes}`);
  if (dst.buf === src.buf && dst.byteOffset === src.byteOffset && dst.buf !== null) return;
  bytesOf(dst).set(bytesOf(src));
}

export function totalBytes(pieces: readonly Piece[]): number {
  return pieces.reduce((s, p) => s + p.bytes, 0);
}

/** Cuts a span into `parts` blocks of whole elements, split where splitPiece would split one piece. */
export function splitSpan(whole: Span, parts: number, elemBytes: number): Span[] {
  if (whole.length === 1) return splitPiece(whole[0]!, parts, elemBytes).map((p) => [p]);
  const n = totalBytes(whole) / elemBytes;
  const out: Span[] = [];
  let seg = 0;
  let within = 0;
  for (let i = 0; i < parts; i++) {
    let want = (Math.floor(((i + 1) * n) / parts) - Math.floor((i * n) / parts)) * elemBytes;
    const block: Piece[] = [];
    while (want > 0) {
      const s = whole[seg]!;
      const take = Math.min(s.bytes - within, want);
      if (take > 0) block.push({ buf: s.buf, byteOffset: s.byteOffset + within, bytes: take });
      want -= take;
      within += take;
      if (within === s.bytes) {
        seg++;
        within = 0;
      }
    }
    out.push(block.length > 0 ? block : [{ buf: whole[0]!.buf, byteOffset: whole[0]!.byteOffset, bytes: 0 }]);
  }
  return out;
}

/** Consecutive blocks of one span as one message. */
export function joinSpans(spans: readonly Span[]): Span {
  return mergeAdjacent(spans.flat());
}
