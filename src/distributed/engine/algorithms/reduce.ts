import { type GroupContext, mod, peer } from "../context.js";
import { type Piece, splitPiece } from "../piece.js";

/**
 * Binomial-tree reduce to group rank `root`. Ranks other than the root accumulate in scratch so
 * that their own input is left as it was.
 */
export function reduceTree(ctx: GroupContext, data: Piece, root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const vr = (r - root + p) % p;
  const real = (v: number) => peer(ctx, v + root);
  const hasChildren = vr % 2 === 0 && vr + 1 < p;
  const acc = vr === 0 || !hasChildren ? data : ctx.scratch.copyOf(data);
  for (let mask = 1; mask < p; mask <<= 1) {
    if ((vr & mask) !== 0) {
      link.send(real(vr - mask), acc).flush();
      return;
    }
    if (vr + mask < p) link.recvReduce(real(vr + mask), acc, ctx.dtype, ctx.op).flush();
  }
}

/**
 * Ring reduce-scatter (as in the ring all-reduce) followed by a gather of the reduced blocks at
 * the root: bandwidth-optimal for large data.
 */
export function reduceRing(ctx: GroupContext, data: Piece, root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const input = splitPiece(data, p, ctx.elem);
  const acc = r === root ? input : splitPiece({ buf: ctx.scratch.take(data.bytes), byteOffset: 0, bytes: data.bytes }, p, ctx.elem);
  const right = peer(ctx, r + 1);
  const left = peer(ctx, r - 1);
  for (let k = 0; k < p - 1; k++) {
    const s = mod(r - k - 1, p);
    const d = mod(r - k - 2, p);
    link.send(right, k === 0 ? input[s]! : acc[s]!);
    link.recvReduce(left, acc[d]!, ctx.dtype, ctx.op, input[d]!);
    link.flush();
  }
  if (r === root) {
    for (let i = 0; i < p; i++) if (i !== r) link.recv(peer(ctx, i), input[i]!);
  } else {
    link.send(peer(ctx, root), acc[r]!);
  }
  link.flush();
}
