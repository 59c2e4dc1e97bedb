import { type GroupContext, peer } from "../context.js";
import { type Piece, copyPiece } from "../piece.js";

/** The root sends block i to group rank i, all at once. */
export function scatterDirect(ctx: GroupContext, inputs: Piece[] | null, output: Piece, root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (r === root) {
    for (let i = 0; i < p; i++) if (i !== r) link.send(peer(ctx, i), inputs![i]!);
    link.flush();
    copyPiece(output, inputs![r]!);
  } else {
    link.recv(peer(ctx, root), output).flush();
  }
}

/** Every rank sends its block to the root, which receives them all at once. */
export function gatherDirect(ctx: GroupContext, input: Piece, outputs: Piece[] | null, root: number): void {
  const { size: p, rank: r, link } = ctx;
  if (r === root) {
    for (let i = 0; i < p; i++) if (i !== r) link.recv(peer(ctx, i), outputs![i]!);
    link.flush();
    copyPiece(outputs![r]!, input);
  } else {
    link.send(peer(ctx, root), input).flush();
  }
}

/** Every pair exchanges its blocks at once; the engine progresses all of them together. */
export function allToAllDirect(ctx: GroupContext, inputs: Piece[], outputs: Piece[]): void {
  const { size: p, rank: r, link } = ctx;
  // Visit peers starting from the right neighbour so that no single rank is everyone's first.
  for (let k = 1; k < p; k++) {
    link.send(peer(ctx, r + k), inputs[(r + k) % p]!);
    link.recv(peer(ctx, r - k), outputs[(r - k + p) % p]!);
  }
  link.flush();
  copyPiece(outputs[r]!, inputs[r]!);
}

/** Dissemination barrier: in round k every rank signals rank + 2^k and waits for rank - 2^k. */
export function barrierDissemination(ctx: GroupContext): void {
  const { size: p, rank: r, link } = ctx;
  const empty: Piece = { buf: new Uint8Array(0), byteOffset: 0, bytes: 0 };
  for (let d = 1; d < p; d <<= 1) {
    link.send(peer(ctx, r + d), empty);
    link.recv(peer(ctx, r - d), empty);
    link.flush();
  }
}
