import { KeyValueTable } from "./kv_table.js";
import { DEFAULT_STORE_TIMEOUT_MS, type Store, StoreTimeoutError, toBytes } from "./store.js";

/** An in-process store: for one-process groups, tests, and threads that share an address space. */
export class HashStore implements Store {
  private readonly table = new KeyValueTable();

  constructor(private readonly timeoutMs = DEFAULT_STORE_TIMEOUT_MS) {}

  async set(key: string, value: Uint8Array | string): Promise<void> {
    this.table.set(key, Uint8Array.from(toBytes(value)));
  }

  async get(key: string, timeoutMs = this.timeoutMs): Promise<Uint8Array> {
    await this.wait([key], timeoutMs);
    return this.table.get(key)!;
  }

  async add(key: string, amount: number): Promise<number> {
    return this.table.add(key, amount);
  }

  async compareSet(key: string, expected: Uint8Array | string, desired: Uint8Array | string): Promise<Uint8Array> {
    return this.table.compareSet(key, toBytes(expected), Uint8Array.from(toBytes(desired)));
  }

  wait(keys: string[], timeoutMs = this.timeoutMs): Promise<void> {
    return new Promise((resolve, reject) => {
      this.table.whenPresent(keys, timeoutMs, (present) =>
        present ? resolve() : reject(new StoreTimeoutError(keys, timeoutMs, "HashStore.wait")),
      );
    });
  }

  async check(keys: string[]): Promise<boolean> {
    return keys.every((k) => this.table.has(k));
  }

  async deleteKey(key: string): Promise<boolean> {
    return this.table.delete(key);
  }

  async numKeys(): Promise<number> {
    return this.table.size;
  }

  async close(): Promise<void> {}
}
