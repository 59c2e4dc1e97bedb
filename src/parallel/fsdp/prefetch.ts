import type { Phase } from "./sequence.js";
import type { FsdpUnit } from "./unit.js";

export interface PrefetchOptions {
  forwardPrefetch: boolean;
  backwardPrefetch: boolean;
  limitAllGathers: number;
}

/**
 * When each unit of one FSDP tree is gathered. Before a unit runs, its own all-gather is finished
 * (a prefetch usually started it while the unit before computed), then the next unit's is started:
 * it travels on the comm worker while this unit computes. One gather is in flight at a time, so
 * one gather buffer serves them all (the wait for this unit's comes before the next one's start;
 * by then it has mostly landed). The next unit
 * in forward is the one that followed it in the last forward; in backward, the one that followed
 * it in the reverse of this forward's post-forward order (FSDP1's BACKWARD_PRE), which is the order
 * a sequential model's backward reaches them. Every rank runs the same code, so every rank makes
 * the same guesses and gathers in the same order; a wrong guess costs a gather, not a hang.
 *
 * `limitAllGathers` bounds how many units that are freed again within the pass (every unit but the
 * root under FULL_SHARD) may be gathered or gathering at once: a prefetch that would exceed it is
 * skipped. Units held for the whole pass by design (the root; every unit under SHARD_GRAD_OP) are
 * outside the count.
 */
export class GatherSchedule {
  private forward: FsdpUnit[] = [];
  private lastForward: FsdpUnit[] = [];
  private postForward: FsdpUnit[] = [];
  private backwardSeen = new Set<FsdpUnit>();
  /** Most transient units gathered or gathering at once, and most unsharded bytes held at once. */
  peakTransient = 0;
  peakHeldBytes = 0;

  constructor(
    private readonly units: readonly FsdpUnit[],
    readonly options: PrefetchOptions,
  ) {
    for (const u of units) u.onMemoryHook = () => this.note();
  }

  /** A new forward pass starts (at the root): the last one's order guides this one's prefetches. */
  beginForward(): void {
    if (this.forward.length > 0) this.lastForward = this.forward;
    this.forward = [];
    this.postForward = [];
  }

  /** Before `unit`'s forward: its own gather, finished, then the next unit's prefetch. */
  beforeForward(unit: FsdpUnit): void {
    if (!this.forward.includes(unit)) this.forward.push(unit);
    unit.unshard("forward");
    this.note();
    if (this.options.forwardPrefetch) this.prefetch(after(this.lastForward, unit), "forward");
  }

  afterForward(unit: FsdpUnit): void {
    if (!this.postForward.includes(unit)) this.postForward.push(unit);
  }

  /** Before `unit`'s backward: as beforeForward, the next unit being the one backward reaches next. */
  beforeBackward(unit: FsdpUnit): void {
    this.backwardSeen.add(unit);
    unit.unshard("backward");
    this.note();
    if (this.options.backwardPrefetch) this.prefetch(after([...this.postForward].reverse(), unit), "backward");
  }

  endBackward(): void {
    this.backwardSeen.clear();
  }

  private prefetch(next: FsdpUnit | undefined, phase: Phase): void {
    if (!next || next.isUnsharded || next.isGathering || next.params.length === 0) return;
    if (phase === "backward" && this.backwardSeen.has(next)) return;
    if (isTransient(next) && this.transientAlive() >= this.options.limitAllGathers) return;
    next.startUnshard(phase);
    this.note();
  }

  private transientAlive(): number {
    let n = 0;
    for (const u of this.units) if (isTransient(u) && (u.isGathering || (u.sharded && u.isUnsharded))) n++;
    return n;
  }

  private note(): void {
    this.peakTransient = Math.max(this.peakTransient, this.transientAlive());
    let held = 0;
    for (const u of this.units) held += u.heldBytes;
    this.peakHeldBytes = Math.max(this.peakHeldBytes, held);
  }
}

/** Units freed again within the pass in which they are gathered. */
function isTransient(u: FsdpUnit): boolean {
  return u.sharded && !u.isRoot && u.options.reshardAfterForward;
}

function after(order: readonly FsdpUnit[], unit: FsdpUnit): FsdpUnit | undefined {
  const i = order.indexOf(unit);
  return i < 0 ? undefined : order[i + 1];
}
