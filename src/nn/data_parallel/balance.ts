/**
 * How DataParallel cuts the batch: into equal pieces at first, then moving a sample at a time
 * between the main thread's piece and a worker's by the times they finished. Why: a worker replica
 * measured slower than the main thread on the same piece (its forward 4.2 against 3.9 ms on the
 * small Transformer: it wakes after the main thread's request, on a core that had idled, and runs
 * in an isolate of its own), so the main thread waited for it in forward and in backward, and with
 * the loss on the gathered output the worker's backward starts only after the loss's backward on
 * the main thread. The gradients do not depend on the cut: the outputs are gathered in order, and
 * forwardLoss weighs each piece's loss by its share of the batch.
 */

/** Steps whose imbalance is looked at before a sample is moved: a median over them, so one preempted step does not move it. */
export const BALANCE_WINDOW = 16;

/** `n` samples cut into `pieces` sizes that differ by at most one, the larger first (PyTorch's scatter). */
export function equalPieces(n: number, pieces: number): number[] {
  return Array.from({ length: pieces }, (_, i) => Math.floor(n / pieces) + (i < n % pieces ? 1 : 0));
}

export class PieceBalancer {
  /** Samples moved from each worker's piece to the main thread's (negative: the other way), one entry per worker. */
  private readonly shift: number[];
  /** The shift the last sizes() applied (clamped so that every piece keeps a sample). */
  private readonly applied: number[];
  private readonly seen: Float64Array[];
  private readonly counts: number[];
  private readonly costs: Float64Array;

  constructor(workers: number) {
    this.shift = new Array<number>(workers).fill(0);
    this.applied = new Array<number>(workers).fill(0);
    this.seen = Array.from({ length: workers }, () => new Float64Array(BALANCE_WINDOW));
    this.counts = new Array<number>(workers).fill(0);
    this.costs = new Float64Array(BALANCE_WINDOW);
  }

  /** The pieces' sizes for a batch of `n` cut `pieces` ways: the main thread's first, each at least 1. */
  sizes(n: number, pieces: number): number[] {
    const sizes = equalPieces(n, pieces);
    for (let i = 1; i < pieces; i++) {
      // Each worker keeps a sample, and gives the main thread at most its fair part of what keeps it at 1.
      const most = sizes[i]! - 1;
      const least = -Math.floor((sizes[0]! - 1) / (pieces - 1));
      const s = Math.max(least, Math.min(most, this.shift[i - 1]!));
      this.applied[i - 1] = s;
      sizes[i]! -= s;
      sizes[0]! += s;
    }
    return sizes;
  }

  /**
   * One step's finish times (ms, one clock): a positive `lateMs` says worker `w` finished its forward
   * and backward that much after the main thread did. `sampleMs` is a bound on one sample's cost
   * (the main thread's span over its samples, waits included): a sample moves only when the median
   * lateness over the window is above it, and a move changes the lateness by twice a sample's
   * marginal cost, which is below that bound, so it cannot overshoot into moving it back.
   */
  record(w: number, lateMs: number, sampleMs: number): void {
    const k = this.counts[w]!;
    this.seen[w]![k] = lateMs;
    if (w === 0) this.costs[k] = sampleMs;
    if (k + 1 < BALANCE_WINDOW) {
      this.counts[w] = k + 1;
      return;
    }
    this.counts[w] = 0;
    const late = median(this.seen[w]!);
    const cost = median(this.costs);
    // One step from what the batch allowed: a shift past what the pieces could take would only have to be undone.
    const applied = this.applied[w]!;
    if (late > cost && this.shift[w]! <= applied) this.shift[w] = applied + 1;
    else if (late < -cost && this.shift[w]! >= applied) this.shift[w] = applied - 1;
  }
}

function median(values: Float64Array): number {
  const sorted = Float64Array.from(values).sort();
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}
