/** Rank, world size and a barrier, as the checkpoint code needs them. */
export interface DistributedContext {
  rank: number;
  worldSize: number;
  barrier(): void;
}

let provider: (() => DistributedContext | null) | null = null;

/** The distributed layer registers how to reach the default process group (checkpoint must not import it). */
export function setDistributedContextProvider(fn: () => DistributedContext | null): void {
  provider = fn;
}

export function distributedContext(): DistributedContext {
  return provider?.() ?? { rank: 0, worldSize: 1, barrier: () => {} };
}
