/** Rank, world size and a barrier, as the checkpoint code needs them. */
export interface DistributedContext {
  rank: number;
  worldSize: number;
  barrier(): void;
  /**
   * Point-to-point notice through the job's store, outside the process group's collective
   * sequence: rank 0 announces that a checkpoint is on disk, the other ranks wait for the
   * announcement. Unlike a barrier this lets `if (rank === 0) await checkpoint.save(…)` (saving
   * replicated state on rank 0 only, as `torch.save` there) leave the collectives untouched.
   */
  announce?(key: string): Promise<void>;
  awaitAnnouncement?(key: string): Promise<void>;
}

let provider: (() => DistributedContext | null) | null = null;

/** The distributed layer registers how to reach the default process group (checkpoint must not import it). */
export function setDistributedContextProvider(fn: () => DistributedContext | null): void {
  provider = fn;
}

export function distributedContext(): DistributedContext {
  return provider?.() ?? { rank: 0, worldSize: 1, barrier: () => {} };
}
