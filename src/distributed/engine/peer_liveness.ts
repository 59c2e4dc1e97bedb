import { StoreTimeoutError, type Store } from "../store/store.js";

/** What a rank published about where it runs (mesh.ts): its host identity, for messages its hostname, and its pid. */
export interface HostInfo {
  host: string;
  hostname: string;
  pid: number;
}

/**
 * Tells, while the process group is being set up, whether a peer on this machine has already
 * exited: its pid is known from the store, so there is no need to wait out the init timeout
 * for it. Peers on other machines cannot be checked this way and are waited for.
 */
export class PeerLiveness {
  constructor(
    private readonly rank: number,
    private readonly myHost: string,
    private hosts: (HostInfo | undefined)[] = [],
  ) {}

  know(hosts: (HostInfo | undefined)[]): void {
    this.hosts = hosts;
  }

  /** Records one rank's host information as soon as it is published, before all the others'. */
  learn(rank: number, info: HostInfo): void {
    this.hosts[rank] = info;
  }

  knows(rank: number): boolean {
    return this.hosts[rank] !== undefined;
  }

  /** Throws naming the first of `ranks` known to have exited. */
  check(ranks: Iterable<number>, waitingFor: string): void {
    for (const r of ranks) {
      const h = this.hosts[r];
      if (!h || r === this.rank || h.host !== this.myHost || processExists(h.pid)) continue;
      throw new Error(
        `rank ${r} (pid ${h.pid} on ${h.hostname}) exited while rank ${this.rank} was waiting for ${waitingFor}; ` +
          "its own output or error file says why",
      );
    }
  }

  /**
   * Waits for `keys` (key i belongs to rank ranks[i]) until `deadline`, checking every half
   * second that no known peer has exited; `onPresent` hears which ranks have published so far.
   */
  async waitForKeys(
    store: Store,
    keys: string[],
    ranks: number[],
    deadline: number,
    waitingFor: string,
    onPresent?: (ranks: number[]) => Promise<void>,
  ): Promise<void> {
    for (;;) {
      const slice = Math.max(1, Math.min(500, deadline - Date.now()));
      try {
        await store.wait(keys, slice);
        return;
      } catch (err) {
        if (!(err instanceof StoreTimeoutError) || Date.now() >= deadline) throw err;
      }
      if (onPresent) {
        const present: number[] = [];
        for (let i = 0; i < keys.length; i++) if (await store.check([keys[i]!])) present.push(ranks[i]!);
        await onPresent(present);
      }
      // Any peer gone during set-up dooms it, whether or not it published this key.
      this.check(this.hosts.keys(), waitingFor);
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user. Only ESRCH says it is gone.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
