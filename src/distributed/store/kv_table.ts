import { bytesToString, toBytes } from "./store.js";

interface Waiter {
  keys: readonly string[];
  done: (present: boolean) => void;
}

/**
 * The store's semantics over an in-memory map, shared by HashStore and the TCP store server so the
 * two cannot drift apart. Waiting is callback based: the server answers a remote client when its
 * keys appear, HashStore resolves a promise.
 */
export class KeyValueTable {
  private readonly map = new Map<string, Uint8Array>();
  private readonly waitersByKey = new Map<string, Set<Waiter>>();

  get size(): number {
    return this.map.size;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  get(key: string): Uint8Array | undefined {
    return this.map.get(key);
  }

  set(key: string, value: Uint8Array): void {
    this.map.set(key, value);
    this.wake(key);
  }

  add(key: string, amount: number): number {
    const old = this.map.get(key);
    const current = old === undefined ? 0 : Number(bytesToString(old));
    if (!Number.isFinite(current)) {
      throw new Error(`store add(${JSON.stringify(key)}): the key holds ${JSON.stringify(bytesToString(old!))}, which is not a number`);
    }
    const next = current + amount;
    this.set(key, toBytes(String(next)));
    return next;
  }

  compareSet(key: string, expected: Uint8Array, desired: Uint8Array): Uint8Array {
    const current = this.map.get(key);
    if (current === undefined) {
      if (expected.length !== 0) return expected;
      this.set(key, desired);
      return desired;
    }
    if (equalBytes(current, expected)) {
      this.set(key, desired);
      return desired;
    }
    return current;
  }

  delete(key: string): boolean {
    return this.map.delete(key);
  }

  /**
   * Calls `done(true)` once every key exists (at once if they already do) or `done(false)` after
   * `timeoutMs`. Returns a cancel function that drops the waiter without calling `done`.
   */
  whenPresent(keys: readonly string[], timeoutMs: number, done: (present: boolean) => void): () => void {
    if (keys.every((k) => this.map.has(k))) {
      done(true);
      return () => {};
    }
    let timer: NodeJS.Timeout | undefined;
    const waiter: Waiter = {
      keys,
      done: (present) => {
        if (timer) clearTimeout(timer);
        this.dropWaiter(waiter);
        done(present);
      },
    };
    for (const k of keys) {
      let set = this.waitersByKey.get(k);
      if (!set) this.waitersByKey.set(k, (set = new Set()));
      set.add(waiter);
    }
    timer = setTimeout(() => waiter.done(false), Math.max(0, timeoutMs));
    return () => {
      if (timer) clearTimeout(timer);
      this.dropWaiter(waiter);
    };
  }

  private wake(key: string): void {
    const set = this.waitersByKey.get(key);
    if (!set) return;
    for (const w of [...set]) {
      if (w.keys.every((k) => this.map.has(k))) w.done(true);
    }
  }

  private dropWaiter(waiter: Waiter): void {
    for (const k of waiter.keys) {
      const set = this.waitersByKey.get(k);
      if (!set) continue;
      set.delete(waiter);
      if (set.size === 0) this.waitersByKey.delete(k);
    }
  }
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
