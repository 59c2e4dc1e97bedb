/**
 * Polling before blocking, for DataParallel's hand-offs. A thread blocked in Atomics.wait is woken
 * through a futex: measured on this project's 2-core VM at 0.1–0.3 ms per hand-off (the sleeping
 * thread's virtual core halts, and the kernel must schedule it again), two to four times a step;
 * and the woken thread starts on cold caches. Each replica has a core of its own, and the other
 * side of these waits is a step's short serial part away from answering, so polling a bounded
 * while before blocking keeps the waiting thread on its core at the cost of CPU time that no
 * other replica needed. That CPU time is counted (spunNs), so that a profile can tell it from work.
 * Where the cores are oversubscribed (other processes) a poll would take a time slice that the
 * other replica, runnable and waiting for a core, needed: a poll that finds itself descheduled (a
 * gap between two of its clock reads) stops polling for the next BACKOFF hand-offs.
 */

/** How long a hand-off is polled for before blocking, by default (DataParallel's spinMs option): above the serial parts a thread waits through in a step (1–2 ms). */
export const SPIN_MS = 2;

/** A gap this long between two clock reads of a poll says that its thread lost its core meanwhile. */
const PREEMPTED_MS = 0.25;
/**
 * A gap this long between two clock reads (64 loads of one word apart: well under a µs on a core) is
 * time the thread did not run (preempted, or the hypervisor's): not counted as polling.
 */
const OFF_CORE_MS = 0.02;
/** Hand-offs that block at once after a poll lost its core (a few dozen steps). */
const BACKOFF = 128;

// Per thread (module state is each isolate's own).
let spun = 0;
let skip = 0;

/**
 * Polls word `at` of `ctrl` for up to `ms` while it still holds `value`; true once it changed, false
 * when the time ran out (block then). `work`, between polls: something useful to do meanwhile
 * (true: it did something); its time is neither polling nor counted against `ms`.
 */
export function spinWhile(ctrl: Int32Array, at: number, value: number, ms: number, work?: () => boolean): boolean {
  if (Atomics.load(ctrl, at) !== value) return true;
  if (ms <= 0) return false;
  if (skip > 0) {
    skip--;
    return false;
  }
  const t0 = performance.now();
  let until = t0 + ms;
  let now = t0;
  let worked = 0;
  // Time off the core, from the poll's own clock reads: the thread's run delay from
  // /proc/thread-self/schedstat, read before and after each poll, cost two reads of 5-12 µs each
  // (system calls, on this VM) at every hand-off of a profiled step.
  let offCore = 0;
  let changed = false;
  do {
    for (let i = 0; i < 64 && !changed; i++) changed = Atomics.load(ctrl, at) !== value;
    if (!changed && work !== undefined) {
      const w0 = performance.now();
      if (work()) {
        // The work's own time is no gap in the polling (it is not this thread losing its core).
        now = performance.now();
        worked += now - w0;
        until += now - w0;
        continue;
      }
    }
    const before = now;
    now = performance.now();
    const gap = now - before;
    if (gap > OFF_CORE_MS) offCore += gap;
    if (gap > PREEMPTED_MS) {
      skip = BACKOFF;
      break;
    }
  } while (!changed && now < until);
  spun += Math.max(0, now - t0 - worked - offCore);
  return changed;
}

/** Time this thread has spent polling on its core in spinWhile, in ns: CPU time (the gaps in its polling, off its core, taken out). */
export function spunNs(): number {
  return spun * 1e6;
}
