import type { OpGate } from "./messages.js";

/**
 * Waits until the gate this operation waits on is opened by another thread (MPI's, in the mpi
 * backend's hierarchical all-reduce), up to `deadline` (performance.now()). That thread is native
 * code whose writes do not wake Atomics.wait, so this polls in short sleeps.
 */
export function passGate(gate: OpGate, deadline: number, timeoutMs: number): void {
  if (gate.wait === undefined) return;
  for (;;) {
    const v = Atomics.load(gate.flags, gate.wait);
    if (v > 0) return;
    if (v < 0) throw new Error("abandoned: the step it waits on (the all-reduce between hosts) failed");
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the all-reduce between hosts`);
    Atomics.wait(gate.flags, gate.wait, 0, 0.05);
  }
}

/** Tells the thread waiting on this operation that it ran. */
export function openGate(gate: OpGate): void {
  if (gate.signal === undefined) return;
  Atomics.store(gate.flags, gate.signal, 1);
  Atomics.notify(gate.flags, gate.signal);
}
