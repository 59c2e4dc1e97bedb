import type { Store } from "./store.js";

/** A view of another store in which every key is prefixed, so that groups and restarts cannot collide. */
export class PrefixStore implements Store {
  constructor(
    readonly prefix: string,
    readonly inner: Store,
  ) {}

  private k(key: string): string {
    return `${this.prefix}/${key}`;
  }

  set(key: string, value: Uint8Array | string): Promise<void> {
    return this.inner.set(this.k(key), value);
  }

  get(key: string, timeoutMs?: number): Promise<Uint8Array> {
    return this.inner.get(this.k(key), timeoutMs);
  }

  add(key: string, amount: number): Promise<number> {
    return this.inner.add(this.k(key), amount);
  }

  compareSet(key: string, expected: Uint8Array | string, desired: Uint8Array | string): Promise<Uint8Array> {
    return this.inner.compareSet(this.k(key), expected, desired);
  }

  wait(keys: string[], timeoutMs?: number): Promise<void> {
    return this.inner.wait(keys.map((k) => this.k(k)), timeoutMs);
  }

  check(keys: string[]): Promise<boolean> {
    return this.inner.check(keys.map((k) => this.k(k)));
  }

  deleteKey(key: string): Promise<boolean> {
    return this.inner.deleteKey(this.k(key));
  }

  /** Counts the keys of the whole underlying store, as torch's PrefixStore does. */
  numKeys(): Promise<number> {
    return this.inner.numKeys();
  }

  /** Closing a view leaves the shared underlying store open. */
  async close(): Promise<void> {}
}
