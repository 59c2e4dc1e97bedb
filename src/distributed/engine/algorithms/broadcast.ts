import { type GroupContext, peer } from "../context.js";
import { type Piece, chunkPiece } from "../piece.js";

/**
 * Binomial-tree broadcast of `pieces` from group rank `root`: log2(p) rounds, each rank sending
 * to all its children at once.
 */
export function broadcastTree(ctx: GroupContext, pieces: Piece[], root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const vr = (r - root + p) % p;
  const real = (v: number) => peer(ctx, v + root);
  let mask = 1;
  while (mask < p) {
    if ((vr & mask) !== 0) {
      for (const x of pieces) link.recv(real(vr - mask), x);
      link.flush();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < p) for (const x of pieces) link.send(real(vr + mask), x);
  }
  link.flush();
}

/**
 * Pipelined chain broadcast: the root streams the data in pieces down the chain root, root+1, …;
 * each rank forwards piece i-1 while it receives piece i, so every link carries the data once
 * and the chain fills after one piece.
 */
export function broadcastChain(ctx: GroupContext, data: Piece, root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const vr = (r - root + p) % p;
  const prev = peer(ctx, r - 1);
  const next = peer(ctx, r + 1);
  const chunks = chunkPiece(data, ctx.pipelineBytes, ctx.elem);
  if (vr === 0) {
    for (const c of chunks) link.send(next, c);
    link.flush();
    return;
  }
  for (let i = 0; i <= chunks.length; i++) {
    if (i < chunks.length) link.recv(prev, chunks[i]!);
    if (i > 0 && vr < p - 1) link.send(next, chunks[i - 1]!);
    link.flush();
  }
}
