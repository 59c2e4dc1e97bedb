import { type GroupContext, mod, peer } from "../context.js";
import { type Piece, copyPiece, mergeAdjacent } from "../piece.js";
import { broadcastTree } from "./broadcast.js";

/** `outputs[i]` receives group rank i's `input`. Every algorithm first places its own block. */
export function allGatherRing(ctx: GroupContext, input: Piece, outputs: Piece[]): void {
  const { size: p, rank: r, link } = ctx;
  copyPiece(outputs[r]!, input);
  const right = peer(ctx, r + 1);
  const left = peer(ctx, r - 1);
  for (let k = 0; k < p - 1; k++) {
    link.send(right, outputs[mod(r - k, p)]!);
    link.recv(left, outputs[mod(r - k - 1, p)]!);
    link.flush();
  }
}

/** Recursive doubling: log2(p) exchanges of ever larger ranges. Groups not a power of two use the ring. */
export function allGatherDoubling(ctx: GroupContext, input: Piece, outputs: Piece[]): void {
  const { size: p, rank: r, link } = ctx;
  if ((p & (p - 1)) !== 0) return allGatherRing(ctx, input, outputs);
  copyPiece(outputs[r]!, input);
  for (let mask = 1; mask < p; mask <<= 1) {
    const partnerG = r ^ mask;
    const mine = r & ~(mask - 1);
    const theirs = partnerG & ~(mask - 1);
    const partner = peer(ctx, partnerG);
    for (const s of mergeAdjacent(outputs.slice(mine, mine + mask))) link.send(partner, s);
    for (const k of mergeAdjacent(outputs.slice(theirs, theirs + mask))) link.recv(partner, k);
    link.flush();
  }
}

/** Gather at group rank 0, then a tree broadcast of everything. */
export function allGatherTree(ctx: GroupContext, input: Piece, outputs: Piece[]): void {
  const { size: p, rank: r, link } = ctx;
  copyPiece(outputs[r]!, input);
  if (r === 0) {
    for (let i = 1; i < p; i++) link.recv(peer(ctx, i), outputs[i]!);
  } else {
    link.send(peer(ctx, 0), input);
  }
  link.flush();
  broadcastTree(ctx, mergeAdjacent(outputs), 0);
}
