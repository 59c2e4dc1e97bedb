import { openSync, readSync } from "node:fs";

/**
 * Where DataParallel's time goes (its `profile` option): the wall time of each phase of a call, per
 * thread, and each thread's CPU time per call. CPU time comes from Linux's
 * /proc/thread-self/schedstat, which the kernel brings up to date only at scheduler ticks and
 * context switches (milliseconds apart), so it is given per thread over many calls, not per phase.
 * On a loaded machine wall time is mostly other processes'; a thread's CPU time per call says what
 * it costs, and a wait's wall time how long one thread stood idle for another.
 */
export const MAIN_PHASES = ["scatter", "forward", "waitForward", "gather", "sendGrad", "waitBackward", "sumGrads"] as const;
export const WORKER_PHASES = ["forward", "copyOutput", "backward", "copyGrads", "idle"] as const;
export type MainPhase = (typeof MAIN_PHASES)[number];
export type WorkerPhase = (typeof WORKER_PHASES)[number];

export interface ThreadProfile<P extends string> {
  /** Milliseconds of wall time per call, per phase. */
  wallMs: Record<P, number>;
  /** This thread's CPU time per call, in ms (the main thread's includes whatever else it ran between calls: the loss, the optimizer). */
  cpuMs: number;
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
const digits = Buffer.alloc(64);

/** This thread's CPU time in ns (0 where /proc is not there). */
export function threadCpuNs(): number {
  if (schedstat === undefined) {
    try {
      schedstat = openSync("/proc/thread-self/schedstat", "r");
    } catch {
      schedstat = null;
    }
  }
  if (schedstat === null) return 0;
  const n = readSync(schedstat, digits, 0, digits.length, 0);
  let ns = 0;
  for (let i = 0; i < n && digits[i] !== 32; i++) ns = ns * 10 + (digits[i]! - 48);
  return ns;
}

/** Accumulates wall ns per phase, and this thread's CPU ns, into shared memory (the main thread reads a worker's). */
export class PhaseClock {
  private wall = 0;
  private cpu = threadCpuNs();

  /** totals: one slot per phase, then one for CPU time. */
  constructor(readonly totals: Float64Array) {}

  static create(phases: number): PhaseClock {
    return new PhaseClock(new Float64Array(new SharedArrayBuffer(8 * (phases + 1))));
  }

  /** Starts timing the next phase. */
  start(): void {
    this.wall = performance.now();
  }

  /** Ends phase `i` (counted since the last start or lap) and starts the next. */
  lap(i: number): void {
    const wall = performance.now();
    this.totals[i] += (wall - this.wall) * 1e6;
    this.wall = wall;
  }

  /** Adds this thread's CPU time since the last call. */
  addCpu(): void {
    const cpu = threadCpuNs();
    this.totals[this.totals.length - 1] += cpu - this.cpu;
    this.cpu = cpu;
  }
}

export function readProfile<P extends string>(names: readonly P[], totals: Float64Array, calls: number): ThreadProfile<P> {
  const per = Math.max(calls, 1) * 1e6;
  return {
    wallMs: Object.fromEntries(names.map((name, i) => [name, totals[i]! / per])) as Record<P, number>,
    cpuMs: totals[names.length]! / per,
  };
}
