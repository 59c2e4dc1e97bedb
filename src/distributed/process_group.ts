import type { OpMessage } from "./engine/messages.js";
import type { CommDType } from "./dtypes.js";
import type { Algorithm, Request } from "./engine/messages.js";
import { isPointToPoint } from "./engine/messages.js";
import { runLocally } from "./local.js";
import { DistributedError, Work } from "./work.js";

/** What runs a group's operations: the comm worker's client, or the mpi backend's (mpi/mpi_client.ts). */
export interface OpClient {
  /** Starts the operation; the Work settles when it is done. */
  submit(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work;
  /** The same for an operation the caller blocks on at once (it may run it on this thread). */
  runBlocking(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work;
}

/** Shared by every group of one initialised job. */
export interface Runtime {
  readonly rank: number;
  readonly worldSize: number;
  readonly client: OpClient | null;
  readonly timeoutMs: number;
  readonly debugDetail: boolean;
  destroyed: boolean;
}

export interface RunOptions {
  async?: boolean;
  timeoutMs?: number;
  algorithm?: Algorithm | "auto";
}

/**
 * A set of ranks that run collectives together (torch.distributed.ProcessGroup). The default
 * group holds every rank; `newGroup` makes others, which share the default group's transports.
 * Each group numbers its collectives; every member must call them in the same order.
 */
export class ProcessGroup {
  private seq = 0;
  private warnedNonMember = false;
  /** Set by destroyProcessGroup(group); the group's collectives then throw. */
  destroyed = false;

  constructor(
    readonly id: number,
    /** Global ranks of the members, in group-rank order. */
    readonly ranks: readonly number[],
    private readonly runtime: Runtime,
  ) {}

  /** This process's rank within the group, or -1 when it is not a member. */
  get rank(): number {
    return this.ranks.indexOf(this.runtime.rank);
  }

  get size(): number {
    return this.ranks.length;
  }

  /** Alias of `size`, the name DDP and torch's `get_world_size(group)` use. */
  get worldSize(): number {
    return this.ranks.length;
  }

  isMember(): boolean {
    return this.rank >= 0;
  }

  /** The group rank of a global rank; throws naming the operation when it is not a member. */
  groupRankOf(globalRank: number, where: string): number {
    const r = this.ranks.indexOf(globalRank);
    if (r < 0) {
      throw new Error(`${where}: rank ${globalRank} is not in the group (its ranks are [${this.ranks.join(", ")}])`);
    }
    return r;
  }

  /**
   * Runs a request on the comm worker (or locally for a group of one). Sync calls block until it
   * is done and throw its error; async calls return the Work.
   */
  run(
    req: Request,
    dtype: CommDType,
    opts: RunOptions,
    debugDescription: string,
    finishers: (() => void)[],
  ): Work | undefined {
    const name = isPointToPoint(req) ? req.kind : `${req.kind} #${this.seq + 1}`;
    if (this.runtime.destroyed || this.destroyed) throw new DistributedError(`${req.kind}: the process group has been destroyed`);
    if (!this.isMember()) {
      if (!this.warnedNonMember) {
        process.emitWarning(`rank ${this.runtime.rank} called ${req.kind} on a group it is not a member of; the call does nothing (as in torch)`);
        this.warnedNonMember = true;
      }
      return opts.async ? Work.completed(name) : undefined;
    }
    const finish = finishers.length > 0 ? () => finishers.forEach((f) => f()) : null;
    const client = this.runtime.client;
    if (this.size === 1 || client === null) {
      runLocally(req, dtype);
      finish?.();
      if (!isPointToPoint(req)) this.seq++;
      return opts.async ? Work.completed(name) : undefined;
    }
    const seq = isPointToPoint(req) ? 0 : ++this.seq;
    const timeoutMs = opts.timeoutMs ?? this.runtime.timeoutMs;
    const algorithm = opts.algorithm === undefined || opts.algorithm === "auto" ? null : opts.algorithm;
    const debug = this.runtime.debugDetail && !isPointToPoint(req) ? debugDescription : null;
    const msg = { group: this.id, seq, dtype, timeoutMs, algorithm, debug, req };
    if (opts.async) return client.submit(msg, name, finish);
    client.runBlocking(msg, name, finish).wait();
    return undefined;
  }
}
