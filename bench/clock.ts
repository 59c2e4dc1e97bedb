import { performance } from "node:perf_hooks";

/**
 * The clock a bench times with, from `--clock wall|cpu` (default wall). On a machine other jobs
 * load, the wall clock measures the share of the cores each side got; the process's CPU time
 * (user + system, every thread's, GC and helper threads included) still measures the code at one
 * thread. At several threads CPU time counts them all, spinning included: an efficiency, not a speed.
 */
export type ClockKind = "wall" | "cpu";

export function clockFromArgs(args: readonly string[]): ClockKind {
  const i = args.indexOf("--clock");
  const value = i >= 0 ? args[i + 1] : "wall";
  if (value !== "wall" && value !== "cpu") throw new RangeError(`--clock: expected wall or cpu, got ${JSON.stringify(value)}`);
  return value;
}

/** Seconds on that clock (an arbitrary origin: take differences). */
export function secondsOn(kind: ClockKind): () => number {
  if (kind === "wall") return () => performance.now() / 1e3;
  return () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
}
