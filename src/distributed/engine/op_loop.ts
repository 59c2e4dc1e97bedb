import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { DTYPE_BYTES } from "../dtypes.js";
import { type CommNative, TransferStatus } from "../native.js";
import { bytesToString } from "../store/store.js";
import type { TCPStore } from "../store/tcp_store.js";
import { CollectiveMismatchError } from "./agreement.js";
import type { Executor } from "./executor.js";
import { TransferError } from "./link.js";
import { SeenBuffers } from "./seen_buffers.js";
import type { CommTraceRing } from "./trace_ring.js";
import { traceNow } from "../../util/trace.js";
import { describeOp, explainTransferError } from "./failure.js";
import { CTL_OPS_POSTED, type FromWorker, isPointToPoint, type OpMessage, type P2PWire, p2pFromWire, type ToWorker } from "./messages.js";

const P2P_CODE = 0xfe;
/**
 * How long a batch of sends and receives waits without progress before the loop looks again. New
 * posts and finished transfers end the wait at once (Link.runBatch's wakeSeen); before they did, the
 * loop looked every 1 ms, yielding the core in between, and a send posted meanwhile waited for it.
 */
const P2P_STALL_MS = 100;

/**
 * The comm worker's main loop: takes requests in the order the main thread posted them and runs
 * each to completion. Point-to-point operations that would block each other (a send and a receive
 * between the same two ranks, posted one after the other) are run as one batch.
 * After a failure that leaves the transports out of step, the group is closed and every later
 * request fails with the first error.
 */
export class OpLoop {
  private readonly queue: Exclude<ToWorker, P2PWire>[] = [];
  private broken: string | null = null;
  /** Latest collective started per group, and what of it the store has been told. */
  private readonly started = new Map<number, number>();
  private readonly published = new Map<number, number>();
  private readonly seen = new SeenBuffers();

  constructor(
    private readonly port: MessagePort,
    private readonly ctl: Int32Array,
    private readonly executor: Executor,
    private readonly native: CommNative,
    private readonly handle: number,
    private readonly store: TCPStore,
    private readonly prefix: string,
    private readonly post: (msg: FromWorker) => void,
    /** Where the collectives' spans go while tracing (trace_ring.ts). */
    private readonly traceRing: CommTraceRing | null = null,
  ) {
    executor.link.onStall = () => this.publishMarks();
  }

  async run(): Promise<void> {
    for (;;) {
      this.pull();
      const m = this.queue.shift();
      if (!m) {
        await this.idle();
        continue;
      }
      if (m.type === "shutdown") return;
      if (m.type === "group") {
        this.executor.addGroup(m.id, m.ranks);
        continue;
      }
      if (m.type === "ran") {
        if ((this.started.get(m.group) ?? 0) < m.seq) this.started.set(m.group, m.seq);
        continue;
      }
      if (m.type === "explain") {
        const message = this.broken ?? (await this.failureMessage(m.op, new TransferError(m.status, m.detail)));
        if (this.broken === null) this.fail(message);
        this.finish(m.id, message);
        continue;
      }
      if (this.broken !== null) {
        this.finish(m.id, `${describeOp(m)} was not run: the process group failed earlier and cannot be used. ${this.broken}`);
        continue;
      }
      this.seen.note(m.req);
      if (isPointToPoint(m.req)) await this.runPointToPoint(m);
      else await this.runCollective(m);
      this.seen.afterOperation();
    }
  }

  /** Closes the transports; peers blocked on this rank learn of it at once. */
  close(): void {
    if (this.broken === null) this.broken = "The process group was destroyed.";
    this.native.markFailed(this.handle);
    this.native.destroy(this.handle);
  }

  private async runCollective(m: OpMessage): Promise<void> {
    const ring = this.traceRing?.enabled ? this.traceRing : null;
    const outerStart = ring ? traceNow() : 0;
    this.started.set(m.group, m.seq);
    this.executor.link.stallMs = Math.max(1, Math.min(500, m.timeoutMs / 4));
    let [start, end, failed] = [outerStart, outerStart, false];
    try {
      if (ring) start = traceNow();
      this.executor.run(m);
      if (ring) end = traceNow();
      this.finish(m.id, null);
    } catch (err) {
      if (ring) [end, failed] = [traceNow(), true];
      if (err instanceof CollectiveMismatchError) return this.finish(m.id, err.message);
      const message = await this.failureMessage(m, err);
      this.fail(message);
      this.finish(m.id, message);
    } finally {
      ring?.write({ outerStart, start, end, outerEnd: traceNow(), msg: m, algorithm: this.executor.lastAlgorithm, failed });
    }
  }

  private async runPointToPoint(first: OpMessage): Promise<void> {
    const link = this.executor.link;
    const batch: OpMessage[] = [];
    const reported = new Set<number>();
    link.clear();
    link.deadline = Infinity;
    // While tracing, each send/recv is a span on the comm thread. Several are in flight at once, so
    // a span runs from its posting, or from the end of the one before if later, to its completion:
    // the spans of one thread must not overlap, and completions come in time order.
    const ring = this.traceRing?.enabled ? this.traceRing : null;
    const posted: number[] = [];
    let lastEnd = 0;
    const finished = (i: number, error: string | null) => {
      reported.add(i);
      if (ring) {
        const end = traceNow();
        const start = Math.max(posted[i]!, lastEnd);
        lastEnd = end;
        // outerStart keeps when it joined the batch: a pipeline's span reports it (trace_ring.ts).
        ring.write({ outerStart: posted[i]!, start, end, outerEnd: end, msg: batch[i]!, algorithm: "direct", failed: error !== null });
      }
      this.finish(batch[i]!.id, error);
    };
    const add = (m: OpMessage) => {
      const req = m.req as Extract<OpMessage["req"], { kind: "send" | "recv" }>;
      const e = DTYPE_BYTES[m.dtype];
      const b = req.buf;
      const piece = "address" in b ? { buf: null, byteOffset: b.address, bytes: b.numel * e } : { buf: b.data, byteOffset: b.offset * e, bytes: b.numel * e };
      link.tag = req.tag;
      link.code = P2P_CODE;
      link.deadline = Math.min(link.deadline, performance.now() + m.timeoutMs);
      if (req.kind === "send") link.send(req.peer, piece);
      else link.recv(req.peer, piece);
      batch.push(m);
      if (ring) posted.push(traceNow());
    };
    add(first);
    for (;;) {
      // Read before taking what is queued: a post counted after this read ends the run below, so
      // a send or receive posted while the batch waits joins it at once (CommClient.post wakes it).
      const seen = this.native.posted(this.handle);
      this.pull();
      for (let next = this.queue[0]; next && next.type !== "shutdown"; next = this.queue[0]) {
        if (next.type === "group") this.executor.addGroup(next.id, next.ranks);
        else if (next.type === "op" && isPointToPoint(next.req)) add(next);
        else break;
        this.queue.shift();
      }
      let status: TransferStatus;
      try {
        // The run also returns as soon as one transfer of the batch finishes, to report it now.
        status = link.runBatch(P2P_STALL_MS, seen);
      } catch (err) {
        link.clear();
        const unfinished = [...batch.keys()].filter((i) => !reported.has(i));
        const message = await this.failureMessage(batch[unfinished[0] ?? 0] ?? first, err);
        this.fail(message);
        for (const i of unfinished) finished(i, message);
        return;
      }
      if (status === TransferStatus.Ok) {
        batch.forEach((_, i) => reported.has(i) || finished(i, null));
        return;
      }
      batch.forEach((_, i) => {
        if (!reported.has(i) && link.isDone(i)) finished(i, null);
      });
    }
  }

  private async failureMessage(m: OpMessage, err: unknown): Promise<string> {
    const detail = explainTransferError(err, m);
    const head = `${describeOp(m)} failed on rank ${this.executor.rank}: ${detail}.`;
    if (isPointToPoint(m.req)) return head;
    const missing = await this.ranksThatNeverArrived(m);
    const tail = missing.length > 0 ? ` Ranks that never arrived at it: ${missing.join(", ")}.` : "";
    return head + tail;
  }

  /**
   * Tells the store which collective this rank is in, per group. Writing it for every collective
   * would cost a store round of wake-ups each time; instead a rank writes it whenever it has
   * waited a while, inside a collective (Link.onStall) or idle. By the time any rank times out,
   * every rank that is stuck or idle has published where it is, and a rank that never published
   * the failed collective never arrived at it.
   */
  private publishMarks(): void {
    for (const [group, seq] of this.started) {
      if (this.published.get(group) === seq) continue;
      this.store.setQuiet(this.key(`arrive/${group}/${this.executor.rank}`), String(seq));
      this.published.set(group, seq);
    }
  }

  /** Ranks of the group whose last published collective is older than this one. */
  private async ranksThatNeverArrived(m: OpMessage): Promise<number[]> {
    const ranks = this.executor.groupRanks(m.group).filter((r) => r !== this.executor.rank);
    const seen = await Promise.all(
      ranks.map((r) =>
        this.store
          .get(this.key(`arrive/${m.group}/${r}`), 1000)
          .then((v) => Number(bytesToString(v)))
          .catch(() => -1),
      ),
    );
    return ranks.filter((_, i) => seen[i]! < m.seq);
  }

  private fail(message: string): void {
    this.broken = message;
    this.native.markFailed(this.handle);
    this.native.destroy(this.handle);
  }

  private finish(id: number, error: string | null): void {
    this.post(error === null ? id : { type: "done", id, error, fatal: this.broken !== null });
  }

  private key(k: string): string {
    return `${this.prefix}/${k}`;
  }

  private pull(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      const msg = m.message as ToWorker;
      this.queue.push(Array.isArray(msg) ? p2pFromWire(msg) : msg);
    }
  }

  /**
   * Waits for the next request in short blocking waits (a collective posted right after the last
   * one starts at once), yielding to the event loop between them so that the store connection is
   * serviced while idle.
   */
  private async idle(): Promise<void> {
    const seen = Atomics.load(this.ctl, CTL_OPS_POSTED);
    this.pull();
    if (this.queue.length > 0) return;
    if (Atomics.wait(this.ctl, CTL_OPS_POSTED, seen, 20) === "timed-out") {
      this.publishMarks();
      this.executor.trimScratch();
      await new Promise((r) => setImmediate(r));
    }
  }
}
