let current: string | null = null;

/**
 * The tracking layer names the run being logged (`track.init`'s id, the same on every rank), so
 * that each checkpoint carries it and `resume` hands it back: a restarted job appends to its runs.
 */
export function setCheckpointRunId(id: string | null): void {
  current = id;
}

export function checkpointRunId(): string | null {
  return current;
}
