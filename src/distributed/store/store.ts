/**
 * The key-value store every rank of a job meets at: rendezvous, address exchange, barriers.
 * Semantics follow torch.distributed's Store:
 * - `get` and `wait` block until the keys exist (up to the timeout, then they reject).
 * - `add` keeps the value as a decimal string, starts a missing key at 0 and returns the new value.
 * - `compareSet` sets `desired` when the current value equals `expected` (or when the key is missing
 *   and `expected` is empty) and returns the value the key holds afterwards; a missing key with a
 *   non-empty `expected` is left missing and `expected` is returned.
 */
export interface Store {
  set(key: string, value: Uint8Array | string): Promise<void>;
  get(key: string, timeoutMs?: number): Promise<Uint8Array>;
  add(key: string, amount: number): Promise<number>;
  compareSet(key: string, expected: Uint8Array | string, desired: Uint8Array | string): Promise<Uint8Array>;
  wait(keys: string[], timeoutMs?: number): Promise<void>;
  check(keys: string[]): Promise<boolean>;
  deleteKey(key: string): Promise<boolean>;
  numKeys(): Promise<number>;
  close(): Promise<void>;
}

/** Thirty seconds: long enough for a slow rank to start, short enough that a missing one is reported. */
export const DEFAULT_STORE_TIMEOUT_MS = 30_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function toBytes(value: Uint8Array | string): Uint8Array {
  return typeof value === "string" ? encoder.encode(value) : value;
}

export function bytesToString(value: Uint8Array): string {
  return decoder.decode(value);
}

export class StoreTimeoutError extends Error {
  constructor(
    readonly keys: readonly string[],
    readonly timeoutMs: number,
    where: string,
  ) {
    super(`${where}: timed out after ${timeoutMs} ms waiting for key(s) ${keys.map((k) => JSON.stringify(k)).join(", ")}`);
    this.name = "StoreTimeoutError";
  }
}
