import { type GroupContext, mod, peer } from "../context.js";
import { type Piece, copyPiece, totalBytes } from "../piece.js";
import { allReduceHalvingDoubling } from "./allreduce.js";
import { reduceTree } from "./reduce.js";

/**
 * `output` on group rank i receives the reduction over ranks of their `inputs[i]`. Inputs are
 * left untouched: partial sums go to scratch, and the last step reduces straight into `output`.
 */
export function reduceScatterRing(ctx: GroupContext, inputs: Piece[], output: Piece): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return copyPiece(output, inputs[0]!);
  const acc = scratchLike(ctx, inputs);
  const right = peer(ctx, r + 1);
  const left = peer(ctx, r - 1);
  for (let k = 0; k < p - 1; k++) {
    const s = mod(r - k - 1, p);
    const d = mod(r - k - 2, p);
    link.send(right, k === 0 ? inputs[s]! : acc[s]!);
    link.recvReduce(left, k === p - 2 ? output : acc[d]!, ctx.dtype, ctx.op, inputs[d]!);
    link.flush();
  }
}

/**
 * Recursive halving: each step a rank keeps half of its range and reduces its partner's copy of
 * that half into it. Groups not a power of two run the halving-doubling all-reduce on a copy.
 */
export function reduceScatterHalving(ctx: GroupContext, inputs: Piece[], output: Piece): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return copyPiece(output, inputs[0]!);
  if ((p & (p - 1)) !== 0) {
    const all = ctx.scratch.take(totalBytes(inputs));
    const blocks = placeBlocks(all, inputs);
    blocks.forEach((b, i) => copyPiece(b, inputs[i]!));
    allReduceHalvingDoubling(ctx, [{ buf: all, byteOffset: 0, bytes: all.byteLength }]);
    return copyPiece(output, blocks[r]!);
  }
  const acc = scratchLike(ctx, inputs);
  const current = inputs.slice();
  let lo = 0;
  let hi = p;
  for (let mask = p >> 1; mask > 0; mask >>= 1) {
    const partner = peer(ctx, r ^ mask);
    const mid = (lo + hi) >> 1;
    const upper = (r & mask) !== 0;
    const [sLo, sHi, kLo, kHi] = upper ? [lo, mid, mid, hi] : [mid, hi, lo, mid];
    for (let i = sLo; i < sHi; i++) link.send(partner, current[i]!);
    for (let i = kLo; i < kHi; i++) link.recvReduce(partner, acc[i]!, ctx.dtype, ctx.op, current[i]!);
    link.flush();
    for (let i = kLo; i < kHi; i++) current[i] = acc[i]!;
    lo = kLo;
    hi = kHi;
  }
  copyPiece(output, current[r]!);
}

/** Tree reduce of everything to group rank 0, which then sends each rank its block. */
export function reduceScatterTree(ctx: GroupContext, inputs: Piece[], output: Piece): void {
  const { size: p, rank: r, link } = ctx;
  const all = ctx.scratch.take(totalBytes(inputs));
  const blocks = placeBlocks(all, inputs);
  blocks.forEach((b, i) => copyPiece(b, inputs[i]!));
  reduceTree(ctx, { buf: all, byteOffset: 0, bytes: all.byteLength }, 0);
  if (r === 0) {
    for (let i = 1; i < p; i++) link.send(peer(ctx, i), blocks[i]!);
    link.flush();
    copyPiece(output, blocks[0]!);
  } else {
    link.recv(peer(ctx, 0), output).flush();
  }
}

function scratchLike(ctx: GroupContext, inputs: Piece[]): Piece[] {
  return placeBlocks(ctx.scratch.take(totalBytes(inputs)), inputs);
}

function placeBlocks(buf: Uint8Array, like: Piece[]): Piece[] {
  let off = 0;
  return like.map((b) => {
    const p = { buf, byteOffset: off, bytes: b.bytes };
    off += b.bytes;
    return p;
  });
}
