import { type GroupContext, largestPowerOfTwo, mod, peer } from "../context.js";
import { type Span, joinSpans, splitSpan } from "../piece.js";
import { broadcastTree } from "./broadcast.js";

/**
 * Ring all-reduce: a reduce-scatter around the ring leaves rank r with block r fully reduced,
 * then an all-gather passes the blocks on. Each rank sends 2(p-1)/p of the data: optimal for
 * large messages.
 */
export function allReduceRing(ctx: GroupContext, data: Span): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const blocks = splitSpan(data, p, ctx.elem);
  const right = peer(ctx, r + 1);
  const left = peer(ctx, r - 1);
  for (let k = 0; k < p - 1; k++) {
    link.send(right, blocks[mod(r - k - 1, p)]!);
    const last = link.nextIndex;
    // The last step completes block r: it takes the average's division.
    link.recvReduce(left, blocks[mod(r - k - 2, p)]!, ctx.dtype, ctx.op, null, k === p - 2 ? ctx.divisor : 1);
    if (k < p - 2) {
      link.flush();
      continue;
    }
    // The last reduced block (block r) is the first one the gather passes on: forward it as it
    // is reduced, while it is in cache, in the same batch as the gather's first receive.
    link.sendGated(right, blocks[r]!, last);
    link.recv(left, blocks[mod(r - 1, p)]!);
    link.flush();
  }
  for (let k = 1; k < p - 1; k++) {
    link.send(right, blocks[mod(r - k, p)]!);
    link.recv(left, blocks[mod(r - k - 1, p)]!);
    link.flush();
  }
}

/**
 * Recursive halving then doubling (Rabenseifner): log2(p) steps each way, so few messages for
 * small and mid-sized data. A group that is not a power of two first folds its extra ranks into
 * their neighbours and hands them the result at the end.
 */
export function allReduceHalvingDoubling(ctx: GroupContext, data: Span): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  const pof2 = largestPowerOfTwo(p);
  const rem = p - pof2;
  let vr: number;
  if (r < 2 * rem) {
    if (r % 2 === 0) {
      link.send(peer(ctx, r + 1), data).flush();
      vr = -1;
    } else {
      link.recvReduce(peer(ctx, r - 1), data, ctx.dtype, ctx.op).flush();
      vr = r >> 1;
    }
  } else {
    vr = r - rem;
  }
  if (vr >= 0) {
    const real = (v: number) => peer(ctx, v < rem ? v * 2 + 1 : v + rem);
    const blocks = splitSpan(data, pof2, ctx.elem);
    const range = (lo: number, hi: number) => joinSpans(blocks.slice(lo, hi));
    let lo = 0;
    let hi = pof2;
    for (let mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const partner = real(vr ^ mask);
      const mid = (lo + hi) >> 1;
      const upper = (vr & mask) !== 0;
      link.send(partner, range(upper ? lo : mid, upper ? mid : hi));
      // The last halving step completes this rank's range: it takes the average's division.
      const divisor = mask === 1 ? ctx.divisor : 1;
      link.recvReduce(partner, range(upper ? mid : lo, upper ? hi : mid), ctx.dtype, ctx.op, null, divisor);
      link.flush();
      if (upper) lo = mid;
      else hi = mid;
    }
    for (let mask = 1; mask < pof2; mask <<= 1) {
      const partnerV = vr ^ mask;
      const mine = vr & ~(mask - 1);
      const theirs = partnerV & ~(mask - 1);
      const partner = real(partnerV);
      link.send(partner, range(mine, mine + mask));
      link.recv(partner, range(theirs, theirs + mask));
      link.flush();
    }
  }
  if (r < 2 * rem) {
    if (r % 2 === 0) link.recv(peer(ctx, r + 1), data).flush();
    else link.send(peer(ctx, r - 1), data).flush();
  }
}

/** Binomial-tree reduce to group rank 0, then a binomial-tree broadcast of the result. */
export function allReduceTree(ctx: GroupContext, data: Span): void {
  const { size: p, rank: r, link } = ctx;
  if (p === 1) return;
  for (let mask = 1; mask < p; mask <<= 1) {
    if ((r & mask) !== 0) {
      link.send(peer(ctx, r - mask), data).flush();
      break;
    }
    // The root's last receive completes the reduction: it takes the average's division.
    const divisor = r === 0 && mask * 2 >= p ? ctx.divisor : 1;
    if (r + mask < p) link.recvReduce(peer(ctx, r + mask), data, ctx.dtype, ctx.op, null, divisor).flush();
  }
  broadcastTree(ctx, [...data], 0);
}
