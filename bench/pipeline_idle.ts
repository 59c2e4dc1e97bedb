// Where a pipeline rank's idle time goes, from traced steps of bench/workers/pipeline_mlp.ts: each
// rank's actions (the schedule's timeline) and its comm thread's send/recv spans, lined up on the
// host's common clock. Used by bench/pipeline.ts; no command of its own.
//
// For rank r over the pipeline's step (the first rank's start to the last rank's end, W ms), idle
// = W - compute. It is split two ways:
// - against a simulation of the step with the measured action times and free messages (S ms):
//   (a) the schedule's slots, (p-1)/m of the rank's compute (what (p-1)/(m+p-1) of the step is when
//   every micro-batch's forward + backward takes the same time on every stage); (d) what the
//   measured times add to it (stages or micro-batches of unequal time: S - compute - (a); negative
//   where a backward sends its input's gradient before its weight gradients, which the formula's
//   whole-backward slots do not count on); and
//   W - S, the time messages and the machine added; and the same simulation with each action's CPU
//   time on the main thread instead of its wall time (a loaded machine keeps a runnable thread off
//   its core, which the wall time counts and the CPU time does not): what a machine with a core
//   free for each thread would give, the figure to compare with (p-1)/(m+p-1) under load;
// - by what each wait for a message was waiting on, from the sender's side: the peer had not yet
//   posted the send (it was computing, or late itself), the sender's comm thread had not yet picked
//   the send up (pickup), the bytes were on their way (transfer: pickup to the receiver's comm
//   thread finishing the receive, which for an activation includes posting its receive once the
//   header is in), and the receive had finished but the waiting thread had not yet resumed
//   (notice); idle outside any wait is the time before the rank's step began and after it ended
//   within the pipeline's step, and waiting for its own sends at the end.
import type { TimedAction } from "../src/distributed/pipelining/schedule.js";

export interface CommSpan {
  name: string;
  mb: number;
  /** When the comm thread took it up, in milliseconds on the host's common clock (performance.timeOrigin + performance.now()). */
  start: number;
  end: number;
}

/** An action of the schedule's timeline (its pool reading left out: the workers don't send it), with the main thread's CPU time over it. */
export type TracedAction = Omit<TimedAction, "heldBytes"> & {
  cpuMs?: number;
  /** For a backward that sent a gradient: the main thread's CPU time from the action's start to the send. */
  cpuBeforeSendMs?: number;
};

/** One step of one rank: its timeline (ms from `origin`) and its comm thread's spans. */
export interface TracedStep {
  origin: number;
  totalMs: number;
  actions: TracedAction[];
  comm: CommSpan[];
}

export interface IdleBreakdown {
  stepMs: number;
  computeMs: number;
  idleMs: number;
  slotsMs: number;
  imbalanceMs: number;
  excessMs: number;
  peerLateMs: number;
  pickupMs: number;
  transferMs: number;
  noticeMs: number;
  outsideMs: number;
  /** The bubble of the simulated step with each action's CPU time (what a machine with a free core for every thread would give), and free messages. */
  cpuSimulatedBubble: number;
}

const overlap = (a0: number, a1: number, b0: number, b1: number) => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
const computeOf = (a: TracedAction) => a.end - a.start - a.waitMs;

/** The share of an action's compute (wall) done when it posted its message (1 when it sent none). */
function sentFraction(a: TracedAction): number {
  const compute = computeOf(a);
  if (a.sentAt === null || compute <= 0) return 1;
  return Math.min(1, Math.max(0, (a.sentAt - a.start - a.waitMs) / compute));
}

/** The step's time with each action taking `duration` (its measured compute time by default) and messages free (one stage per rank). */
function simulate(steps: readonly TracedStep[], duration: (a: TracedAction) => number = computeOf, beforeSend: (a: TracedAction, d: number) => number = (a, d) => d * sentFraction(a)): number {
  const p = steps.length;
  const done = new Map<string, number>();
  const next = new Array<number>(p).fill(0);
  const free = new Array<number>(p).fill(0);
  for (let left = steps.reduce((n, s) => n + s.actions.length, 0); left > 0; ) {
    let progressed = false;
    for (let r = 0; r < p; r++) {
      const a = steps[r]!.actions[next[r]!];
      if (!a) continue;
      const s = a.stage;
      const deps = a.kind === "F" ? (s > 0 ? [`F${s - 1}:${a.mb}`] : []) : s < p - 1 ? [`B${s + 1}:${a.mb}`, `F${s}:${a.mb}`] : [`F${s}:${a.mb}`];
      if (deps.some((d) => !done.has(d))) continue;
      const start = Math.max(free[r]!, ...deps.map((d) => done.get(d)!));
      const d = duration(a);
      free[r] = start + d;
      // The peer can go on once the message is posted: for a backward that sends its input's
      // gradient first (inputGradientFirst), before its weight gradients, about half way through.
      done.set(`${a.kind}${s}:${a.mb}`, start + beforeSend(a, d));
      next[r]!++;
      left--;
      progressed = true;
    }
    if (!progressed) throw new Error("bench/pipeline_idle: the traced orders deadlock");
  }
  return Math.max(...free);
}

/** The breakdown of each rank's idle time in one traced step (`steps[r]`: rank r's; one stage per rank). */
export function idleBreakdown(steps: readonly TracedStep[], m: number): IdleBreakdown[] {
  const p = steps.length;
  const w0 = Math.min(...steps.map((s) => s.origin));
  const w1 = Math.max(...steps.map((s) => s.origin + s.totalMs));
  const W = w1 - w0;
  const S = simulate(steps);
  const cpuOf = (a: TracedAction) => a.cpuMs ?? NaN;
  const Scpu = simulate(steps, cpuOf, (a, d) => Math.min(d, a.cpuBeforeSendMs ?? d * sentFraction(a)));
  const comm = (r: number, name: string, mb: number) => steps[r]!.comm.find((c) => c.name === name && c.mb === mb);
  return steps.map((st, r) => {
    const computeMs = st.actions.reduce((n, a) => n + computeOf(a), 0);
    const out: IdleBreakdown = {
      stepMs: W, computeMs, idleMs: W - computeMs, slotsMs: ((p - 1) / m) * computeMs, imbalanceMs: S - computeMs - ((p - 1) / m) * computeMs,
      excessMs: W - S, peerLateMs: 0, pickupMs: 0, transferMs: 0, noticeMs: 0, outsideMs: 0,
      cpuSimulatedBubble: 1 - st.actions.reduce((n, a) => n + cpuOf(a), 0) / Scpu,
    };
    let waits = 0;
    for (const a of st.actions) {
      if (a.waitStart === null) continue;
      const ws = st.origin + a.waitStart;
      const we = ws + a.waitMs;
      waits += a.waitMs;
      const what = a.kind === "F" ? "activation" : "gradient";
      const from = a.kind === "F" ? a.stage - 1 : a.stage + 1;
      const sender = steps[from]!.actions.find((b) => b.kind === a.kind && b.mb === a.mb && b.sentAt !== null);
      const sent = comm(from, `send ${what}`, a.mb);
      const arrived = comm(r, `recv ${what}`, a.mb);
      if (!sender || !sent || !arrived) {
        out.peerLateMs += a.waitMs; // untraced: counted as the peer's, the conservative reading
        continue;
      }
      const P = steps[from]!.origin + sender.sentAt!;
      const K = Math.max(P, sent.start);
      const A = Math.max(K, arrived.end);
      out.peerLateMs += overlap(ws, we, -Infinity, P);
      out.pickupMs += overlap(ws, we, P, K);
      out.transferMs += overlap(ws, we, K, A);
      out.noticeMs += overlap(ws, we, A, Infinity);
    }
    out.outsideMs = out.idleMs - waits;
    return out;
  });
}

/** The breakdown of the step whose pipeline step time is the median (odd count: the middle one), so that each rank's figures add up. */
export function medianStep(perStep: readonly IdleBreakdown[][]): IdleBreakdown[] {
  const sorted = [...perStep].sort((a, b) => a[0]!.stepMs - b[0]!.stepMs);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
