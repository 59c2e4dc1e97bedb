import { openSync, readSync } from "node:fs";
import { spunNs } from "./spin.js";
import { memoryPool } from "../../tensor/storage.js";

/**
 * Where DataParallel's time goes (its `profile` option): the wall time of each phase of a call, per
 * thread, and each thread's CPU time per call. CPU time comes from Linux's
 * /proc/thread-self/schedstat, which the kernel brings up to date only at scheduler ticks and
 * context switches (milliseconds apart), so it is given per thread over many calls, not per phase.
 * On a loaded machine wall time is mostly other processes'; a thread's CPU time per call says what
 * it costs, and a wait's wall time how long one thread stood idle for another.
 */
/**
 * betweenCalls: from the gradient sum's end to the next call's scatter, the caller's code (the
 * optimizer's step, zeroGrad, its next batch): with the sum, the serial part a worker waits through.
 * sumWhileWaiting: the gradients added while a replica's backward went on (the rest: sumGrads).
 */
export const MAIN_PHASES = ["scatter", "forward", "waitForward", "gather", "sendGrad", "waitBackward", "sumWhileWaiting", "sumGrads", "betweenCalls"] as const;
/**
 * A worker's backward includes handing over its gradients (worker.ts's handOver). Its idle time is
 * split: idleForMainBackward, from its backward's answer to the end of the main thread's own
 * piece's backward, when the worker finished first (the balancer's to take back); the rest of the
 * idle before a forward request (idleBeforeForward: the main thread's serial part, its wake-ups);
 * and between its forward and its backward (idleBeforeBackward).
 */
export const WORKER_PHASES = ["forward", "copyOutput", "backward", "idleForMainBackward", "idleBeforeForward", "idleBeforeBackward"] as const;
export type MainPhase = (typeof MAIN_PHASES)[number];
export type WorkerPhase = (typeof WORKER_PHASES)[number];

export interface ThreadProfile<P extends string> {
  /** Milliseconds of wall time per call, per phase. */
  wallMs: Record<P, number>;
  /** This thread's CPU time per call, in ms (the main thread's includes whatever else it ran between calls: the loss, the optimizer). */
  cpuMs: number;
  /**
   * Milliseconds per call this thread was runnable but off its core, waiting for the kernel to run
   * it (schedstat's run delay): time the other threads of the machine (the other replica, V8's
   * compiler and GC helpers, other processes) took from it.
   */
  runDelayMs: number;
  /**
   * Milliseconds per call from the other thread's signal (Atomics.notify with an answer or a
   * request) to this thread running again, summed over the waits that blocked: the hand-off's own
   * latency, run delay included. A wait's wall time less this is the other thread still working.
   */
  wakeMs: number;
  /** Milliseconds per call this thread polled for the other before blocking (spin.ts): CPU time that is not work, part of cpuMs. */
  spinMs: number;
  /**
   * Young-generation collections per call that the arena asked for on this thread (tensor/arena.ts:
   * wherever an allocation found its budget spent), whose pause the other thread waits through at
   * the next hand-off.
   */
  scavenges: number;
}
export interface DataParallelProfile {
  /** Forward calls measured. */
  calls: number;
  main: ThreadProfile<MainPhase>;
  /** One entry per worker replica (slot 1, 2, …). */
  workers: ThreadProfile<WorkerPhase>[];
}

// Module state is per thread (each worker has its own), and so is the file: opened once, read with
// pread (a few µs; opening it each time cost ten times that).
let schedstat: number | null | undefined;
const digits = Buffer.alloc(96);
/** The run delay read by the last threadCpuNs() call, in ns. */
let lastRunDelayNs = 0;

/** This thread's CPU time in ns (0 where /proc is not there); its run delay is left in lastRunDelayNs. */
export function threadCpuNs(): number {
  if (schedstat === undefined) {
    try {
      schedstat = openSync("/proc/thread-self/schedstat", "r");
    } catch {
      schedstat = null;
    }
  }
  if (schedstat === null) return 0;
  // "<cpu ns> <run delay ns> <timeslices>"
  const n = readSync(schedstat, digits, 0, digits.length, 0);
  let i = 0;
  let ns = 0;
  for (; i < n && digits[i] !== 32; i++) ns = ns * 10 + (digits[i]! - 48);
  let delay = 0;
  for (i++; i < n && digits[i] !== 32; i++) delay = delay * 10 + (digits[i]! - 48);
  lastRunDelayNs = delay;
  return ns;
}

/** The run delay (ns) that the last threadCpuNs() call on this thread read. */
export function lastThreadRunDelayNs(): number {
  return lastRunDelayNs;
}

/**
 * A time stamp comparable across threads, in ns: CLOCK_MONOTONIC through process.hrtime, one clock
 * for the whole process (performance.now() counts from each thread's own start).
 */
export function monotonicNs(): number {
  return Number(process.hrtime.bigint());
}

/** Slots of a clock's shared totals after its phases: what it accumulates, then two time stamps. */
const CPU = 0, RUN_DELAY = 1, WAKE = 2, SPIN = 3, SCAVENGES = 4, ACCUMULATED = 5;
/** The time stamps (monotonicNs) of the last signal each side sent: the worker's answer, the main thread's request. */
export const ANSWERED_AT = 5, REQUESTED_AT = 6;
const SLOTS = 7;

/**
 * Accumulates wall ns per phase, this thread's CPU and run delay ns, and its wake-up latencies, into
 * shared memory (the main thread reads a worker's). A worker's totals also carry the time stamps of
 * the last signals between it and the main thread (ANSWERED_AT, REQUESTED_AT), from which the side
 * that waited computes its wake-up latency.
 */
export class PhaseClock {
  /**
   * The last lap's wall time (ms), CPU time and run delay (ns), in a Float64Array rather than
   * number fields: a field that held a small integer first (0, or a thread's CPU ns below 2^31)
   * and a fractional or larger number later changed its representation, which replaced the
   * object's hidden class and deoptimized every caller that had inlined start()/lap()
   * (data_parallel.ts's forward, scatterRun, startBackward, collectGradients) once, some hundred
   * steps in.
   */
  private readonly marks = new Float64Array(5);
  /** Where the accumulated slots start (after the phases). */
  private readonly base: number;

  /** totals: one slot per phase, then CPU, run delay, wake, spin, scavenges, and the two time stamps. */
  constructor(readonly totals: Float64Array) {
    this.base = totals.length - SLOTS;
    this.marks[1] = threadCpuNs();
    this.marks[2] = lastRunDelayNs;
    this.marks[3] = spunNs();
    this.marks[4] = scavengesHere();
  }

  static create(phases: number): PhaseClock {
    return new PhaseClock(new Float64Array(new SharedArrayBuffer(8 * (phases + SLOTS))));
  }

  /** Starts timing the next phase. */
  start(): void {
    this.marks[0] = performance.now();
  }

  /** Ends phase `i` (counted since the last start or lap) and starts the next. */
  lap(i: number): void {
    const wall = performance.now();
    this.totals[i] += (wall - this.marks[0]!) * 1e6;
    this.marks[0] = wall;
  }

  /** Adds this thread's CPU time and run delay since the last call. */
  addCpu(): void {
    const cpu = threadCpuNs();
    const delay = lastRunDelayNs;
    this.totals[this.base + CPU] += cpu - this.marks[1]!;
    this.totals[this.base + RUN_DELAY] += delay - this.marks[2]!;
    this.marks[1] = cpu;
    this.marks[2] = delay;
    const spin = spunNs();
    this.totals[this.base + SPIN] += spin - this.marks[3]!;
    this.marks[3] = spin;
    const scavenges = scavengesHere();
    this.totals[this.base + SCAVENGES] += scavenges - this.marks[4]!;
    this.marks[4] = scavenges;
  }

  /** Records now as the time of a signal, in slot `at` (ANSWERED_AT or REQUESTED_AT) of `totals`. */
  static stamp(totals: Float64Array, at: number): void {
    totals[totals.length - SLOTS + at] = monotonicNs();
  }

  /** Adds the time since the signal stamped in slot `at` of `totals` to this thread's wake-up latency. */
  woke(totals: Float64Array, at: number): void {
    const sent = totals[totals.length - SLOTS + at]!;
    if (sent > 0) this.totals[this.base + WAKE] += monotonicNs() - sent;
  }

  /**
   * Moves `ns` of this clock's phase `from` to phase `to`: what another thread attributed on the
   * shared timeline (the main thread, for a worker idle while it was still busy).
   */
  move(from: number, to: number, ns: number): void {
    this.totals[from] -= ns;
    this.totals[to] += ns;
  }

  /** Zeroes what was accumulated (not the time stamps, which a signal in flight may still need). */
  reset(): void {
    this.totals.fill(0, 0, this.base + ACCUMULATED);
  }
}

export function readProfile<P extends string>(names: readonly P[], totals: Float64Array, calls: number): ThreadProfile<P> {
  const per = Math.max(calls, 1) * 1e6;
  const base = totals.length - SLOTS;
  return {
    wallMs: Object.fromEntries(names.map((name, i) => [name, totals[i]! / per])) as Record<P, number>,
    cpuMs: totals[base + CPU]! / per,
    runDelayMs: totals[base + RUN_DELAY]! / per,
    wakeMs: totals[base + WAKE]! / per,
    spinMs: totals[base + SPIN]! / per,
    scavenges: totals[base + SCAVENGES]! / Math.max(calls, 1),
  };
}

/**
 * The young-generation collections the arena has asked for on this thread (0 without the arena).
 * Through memoryPool.stats(), whose check of every block handed out (arena.cc's Reclaim(true)) is
 * not free of effects: before the worker made that check itself at each answer
 * (memoryPool.reclaim()), these profile reads were what kept the free lists stocked, and
 * unprofiled, DataParallel's threads on the bench's Transformer asked for 0.5-0.9 scavenges per
 * step each instead of 0.2-0.3 (2026-12-07, loaded machine): see the README.
 */
function scavengesHere(): number {
  return memoryPool.stats()?.collections ?? 0;
}
