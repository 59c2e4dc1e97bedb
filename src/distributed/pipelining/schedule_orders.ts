/** One unit of a stage's work: the forward or the backward of one micro-batch. */
export interface Action {
  readonly kind: "F" | "B";
  readonly mb: number;
}

/** GPipe: every forward, then every backward; m micro-batches of activations live at the peak. */
export function gpipeOrder(_stage: number, _numStages: number, m: number): Action[] {
  return [...range(m).map((mb) => ({ kind: "F" as const, mb })), ...range(m).map((mb) => ({ kind: "B" as const, mb }))];
}

/**
 * 1F1B (PipeDream-flush): stage s runs p-1-s warm-up forwards, then alternates one forward and
 * one backward, then drains the backwards. At most p-s micro-batches are alive at once on stage s,
 * against m for GPipe, for the same bubble.
 */
export function oneFOneBOrder(stage: number, numStages: number, m: number): Action[] {
  const warmup = Math.min(numStages - 1 - stage, m);
  const out: Action[] = range(warmup).map((mb) => ({ kind: "F", mb }));
  let f = warmup;
  let b = 0;
  while (f < m) {
    out.push({ kind: "F", mb: f++ });
    out.push({ kind: "B", mb: b++ });
  }
  while (b < m) out.push({ kind: "B", mb: b++ });
  return out;
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
 * and messages are free: 1 - (work per stage) / (time of the whole step), found by running the
 * stages' orders against their dependencies (F(s, mb) after F(s-1, mb); B(s, mb) after
 * B(s+1, mb) and its own F). For GPipe and 1F1B it is (p-1)/(m+p-1).
 */
export function idealBubbleFraction(order: (stage: number, numStages: number, m: number) => Action[], numStages: number, m: number): number {
  const orders = range(numStages).map((s) => order(s, numStages, m));
  const done = new Map<string, number>();
  const next = new Array(numStages).fill(0);
  const free = new Array(numStages).fill(0);
  let left = orders.reduce((n, o) => n + o.length, 0);
  while (left > 0) {
    let progressed = false;
    for (let s = 0; s < numStages; s++) {
      const a = orders[s]![next[s]];
      if (!a) continue;
      const deps = a.kind === "F" ? (s > 0 ? [`F${s - 1}:${a.mb}`] : []) : s < numStages - 1 ? [`B${s + 1}:${a.mb}`, `F${s}:${a.mb}`] : [`F${s}:${a.mb}`];
      if (deps.some((d) => !done.has(d))) continue;
      const start = Math.max(free[s], ...deps.map((d) => done.get(d)!));
      free[s] = start + 1;
      done.set(`${a.kind}${s}:${a.mb}`, start + 1);
      next[s]++;
      left--;
      progressed = true;
    }
    if (!progressed) throw new Error("internal: the schedule's orders deadlock");
  }
  const makespan = Math.max(...free);
  return 1 - (2 * m) / makespan;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
