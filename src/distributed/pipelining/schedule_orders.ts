/** One unit of a rank's work: the forward or the backward of one micro-batch on one stage (global index). */
export interface Action {
  readonly kind: "F" | "B";
  readonly mb: number;
  readonly stage: number;
}

/** A rank's order of actions: (rank, ranks in the pipeline, micro-batches) => actions. */
export type OrderFn = (rank: number, numRanks: number, m: number) => Action[];

/** GPipe: every forward, then every backward; m micro-batches of activations live at the peak. */
export function gpipeOrder(stage: number, _numStages: number, m: number): Action[] {
  return [...range(m).map((mb) => ({ kind: "F" as const, mb, stage })), ...range(m).map((mb) => ({ kind: "B" as const, mb, stage }))];
}

/**
 * 1F1B (PipeDream-flush): stage s runs p-1-s warm-up forwards, then alternates one forward and
 * one backward, then drains the backwards. At most p-s micro-batches are alive at once on stage s,
 * against m for GPipe, for the same bubble.
 */
export function oneFOneBOrder(stage: number, numStages: number, m: number): Action[] {
  const warmup = Math.min(numStages - 1 - stage, m);
  const out: Action[] = range(warmup).map((mb) => ({ kind: "F", mb, stage }));
  let f = warmup;
  let b = 0;
  while (f < m) {
    out.push({ kind: "F", mb: f++, stage });
    out.push({ kind: "B", mb: b++, stage });
  }
  while (b < m) out.push({ kind: "B", mb: b++, stage });
  return out;
}

/**
 * Interleaved 1F1B (torch.distributed.pipelining.ScheduleInterleaved1F1B, Megatron's virtual
 * pipeline): rank r of p holds the v stages r, r+p, r+2p, … and runs, in PyTorch's order, the
 * micro-batches in rounds of `m / rounds` (rounds = max(1, floor(m / p)); m must be a multiple of
 * it): warm-up forwards moving to the next local stage every round, one forward one backward, then
 * the remaining backwards, backwards going through the local stages in reverse. The bubble shrinks
 * to about (p-1)/(v·m + p-1) for v times the messages.
 */
export function interleavedOneFOneBOrder(rank: number, p: number, m: number, v: number): Action[] {
  const perRound = microbatchesPerRound(p, m);
  const warmup = Math.min((v - 1) * perRound + 2 * (p - 1 - rank), m * v);
  const total = m * v;
  const fwdStage = (op: number) => (Math.floor(op / perRound) % v) * p + rank;
  const bwdStage = (op: number) => (v - 1 - (Math.floor((op - warmup) / perRound) % v)) * p + rank;
  const nextF = new Map<number, number>();
  const nextB = new Map<number, number>();
  const take = (counters: Map<number, number>, stage: number) => {
    const mb = counters.get(stage) ?? 0;
    counters.set(stage, mb + 1);
    return mb;
  };
  const out: Action[] = [];
  for (let op = 0; op < total; op++) {
    // Forwards for the warm-up and the steady state; each steady op also runs one backward.
    const f = fwdStage(op);
    out.push({ kind: "F", stage: f, mb: take(nextF, f) });
    if (op >= warmup) {
      const b = bwdStage(op);
      out.push({ kind: "B", stage: b, mb: take(nextB, b) });
    }
  }
  // Cool-down: the backwards the steady state did not reach.
  for (let op = total; op < total + warmup; op++) {
    const b = bwdStage(op);
    out.push({ kind: "B", stage: b, mb: take(nextB, b) });
  }
  return out;
}

/** Micro-batches per round of the interleaved schedule; m must be a multiple of the rounds, as in PyTorch. */
export function microbatchesPerRound(p: number, m: number): number {
  const rounds = Math.max(1, Math.floor(m / p));
  if (m % rounds !== 0) {
    throw new Error(`ScheduleInterleaved1F1B: ${m} micro-batches on ${p} ranks run in ${rounds} rounds, so the number of micro-batches must be a multiple of ${rounds}`);
  }
  return m / rounds;
}

/** The most micro-batches whose forward has run and whose backward has not, in an order. */
export function peakInFlight(order: readonly Action[]): number {
  let alive = 0;
  let peak = 0;
  for (const a of order) {
    alive += a.kind === "F" ? 1 : -1;
    peak = Math.max(peak, alive);
  }
  return peak;
}

/**
 * The bubble fraction of a schedule when every forward and every backward takes one unit of time
 * and messages are free: 1 - (work per rank) / (time of the whole step), found by running the
 * ranks' orders against their dependencies (F(s, mb) after F(s-1, mb); B(s, mb) after
 * B(s+1, mb) and its own F). For GPipe and 1F1B it is (p-1)/(m+p-1).
 */
export function idealBubbleFraction(order: OrderFn, numRanks: number, m: number, stagesPerRank = 1): number {
  const last = numRanks * stagesPerRank - 1;
  const orders = range(numRanks).map((r) => order(r, numRanks, m));
  const done = new Map<string, number>();
  const next = new Array(numRanks).fill(0);
  const free = new Array(numRanks).fill(0);
  let left = orders.reduce((n, o) => n + o.length, 0);
  while (left > 0) {
    let progressed = false;
    for (let r = 0; r < numRanks; r++) {
      const a = orders[r]![next[r]];
      if (!a) continue;
      const s = a.stage;
      const deps = a.kind === "F" ? (s > 0 ? [`F${s - 1}:${a.mb}`] : []) : s < last ? [`B${s + 1}:${a.mb}`, `F${s}:${a.mb}`] : [`F${s}:${a.mb}`];
      if (deps.some((d) => !done.has(d))) continue;
      const start = Math.max(free[r], ...deps.map((d) => done.get(d)!));
      free[r] = start + 1;
      done.set(`${a.kind}${s}:${a.mb}`, start + 1);
      next[r]++;
      left--;
      progressed = true;
    }
    if (!progressed) throw new Error("internal: the schedule's orders deadlock");
  }
  const makespan = Math.max(...free);
  return 1 - (2 * m * stagesPerRank) / makespan;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
