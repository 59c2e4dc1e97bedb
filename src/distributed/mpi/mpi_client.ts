import type { CommDType } from "../dtypes.js";
import type { OpMessage } from "../engine/messages.js";
import { Work } from "../work.js";
import { MPI_KIND, type MpiJob, type MpiNative } from "./mpi_native.js";
import { type Place, type Started, startRequest } from "./mpi_requests.js";

/** One operation in flight: its id on MPI's thread and what to do once MPI is done with it. */
interface Pending {
  id: number;
  work: Work;
  deadline: number;
  timeoutMs: number;
  done: () => void;
  keep: unknown[];
}

/** How often a waiting rank looks whether a peer on its host has died. */
const WATCH_MS = 250;
/** How long operations in flight may still finish once a peer on this host is found dead. */
const DEAD_PEER_GRACE_MS = 500;
/** How long finalising may take: MPI_Finalize waits for every rank to reach it. */
const FINALIZE_MS = 30_000;

/**
 * The `mpi` backend's operations: each request becomes one MPI call on the addon's own thread
 * (native/mpi/mpi_thread.cc), in the order this rank posts them, on the communicator of its group
 * (MPI_COMM_WORLD, or one split off it per newGroup). MPI matches collectives by order per
 * communicator, as ringtorch numbers them. The thread runs them while the main thread computes,
 * so DDP's bucket all-reduces overlap backward; it tells this thread when something finished.
 *
 * MPI cannot cancel an operation or survive a dead peer, so every wait is watched here: past its
 * timeout, or when a rank on this host has died (its pid is gone), the operation fails with
 * ringtorch's error naming the cause, and the group is closed.
 */
export class MpiClient {
  private readonly pending = new Map<number, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private failure: string | null = null;
  /** Arrays of operations that failed while MPI may still hold them: never freed. */
  private readonly abandoned: unknown[] = [];
  private readonly groups = new Map<number, Place>();
  /** The finalize operation's id once posted. */
  private finalizing: number | null = null;
  readonly rank: number;
  readonly size: number;
  readonly job: MpiJob;

  constructor(
    private readonly mpi: MpiNative,
    private readonly timeoutMs: number,
  ) {
    this.job = mpi.init(() => this.poll());
    this.rank = this.job.rank;
    this.size = this.job.size;
    this.groups.set(0, { comm: 0, size: this.size, rank: this.rank, tagUpperBound: this.job.tagUpperBound });
    process.once("exit", (code) => this.finalizeAtExit(code));
  }

  submit(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    const work = new Work(description, (w) => this.block(w), onSettle);
    if (this.failure !== null) {
      work.settle(this.failure);
      return work;
    }
    try {
      const place = this.groups.get(msg.group);
      if (!place) throw new Error(`internal: process group ${msg.group} has no MPI communicator`);
      this.track(startRequest(this.mpi, place, msg.req, msg.dtype), work, msg.timeoutMs);
    } catch (err) {
      work.settle(`${description} failed on rank ${this.rank} (mpi backend): ${(err as Error).message}`);
    }
    return work;
  }

  runBlocking(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    return this.submit(msg, description, onSettle);
  }

  /** An operation the caller posts to the addon itself (the hierarchical all-reduce's gated step), watched like the rest. */
  submitPosted(group: number, description: string, timeoutMs: number, start: (mpi: MpiNative, place: Place) => Started): Work {
    const work = new Work(description, (w) => this.block(w), null);
    if (this.failure !== null) {
      work.settle(this.failure);
      return work;
    }
    try {
      const place = this.groups.get(group);
      if (!place) throw new Error(`internal: process group ${group} has no MPI communicator`);
      this.track(start(this.mpi, place), work, timeoutMs);
    } catch (err) {
      work.settle(`${description} failed on rank ${this.rank} (mpi backend): ${(err as Error).message}`);
    }
    return work;
  }

  /**
   * Every rank says whether something failed on it; returns the ranks that did, the same on all.
   * Blocks (setup only) up to `waitMs`: longer than the slowest rank may take to get here.
   */
  ranksThatFailed(failed: boolean, waitMs: number): number[] {
    const flags = new Uint8Array(this.size);
    const mine = new Uint8Array([failed ? 1 : 0]);
    const outputs = Array.from({ length: this.size }, (_, r) => ({ data: flags, offset: r, numel: 1 }));
    this.setupStep({ kind: "allGather", input: { data: mine, offset: 0, numel: 1 }, outputs }, "allGather of the setup's outcome", waitMs);
    return [...flags.keys()].filter((r) => flags[r] !== 0);
  }

  /** Every rank's `value`, by rank; blocks (setup only). */
  allGatherInts(value: number, waitMs = this.timeoutMs): number[] {
    const all = new Int32Array(this.size);
    const mine = new Int32Array([value]);
    const outputs = Array.from({ length: this.size }, (_, r) => ({ data: all, offset: r, numel: 1 }));
    this.setupStep({ kind: "allGather", input: { data: mine, offset: 0, numel: 1 }, outputs }, "allGather of the setup", waitMs, "int32");
    return [...all];
  }

  /** Every rank's `bytes` (all of one length), back to back by rank; blocks (setup only). */
  allGatherBytes(bytes: Uint8Array): Uint8Array {
    const all = new Uint8Array(bytes.length * this.size);
    const outputs = Array.from({ length: this.size }, (_, r) => ({ data: all, offset: r * bytes.length, numel: bytes.length }));
    this.setupStep({ kind: "allGather", input: { data: bytes, offset: 0, numel: bytes.length }, outputs }, "allGather of the setup");
    return all;
  }

  private setupStep(req: OpMessage["req"], description: string, waitMs = this.timeoutMs, dtype: CommDType = "uint8"): void {
    this.submit({ group: 0, seq: 0, dtype, timeoutMs: waitMs, algorithm: null, debug: null, req }, description, null).wait();
  }

  /** newGroup: a communicator split off MPI_COMM_WORLD; every rank calls it in the same order. */
  addGroup(id: number, members: readonly number[], timeoutMs: number): void {
    const member = members.includes(this.rank);
    this.groups.set(id, { comm: id, size: members.length, rank: members.indexOf(this.rank), tagUpperBound: this.job.tagUpperBound });
    const ints = new Int32Array([member ? 1 : 0, this.rank, id]);
    const work = new Work(`newGroup([${members.join(", ")}])`, (w) => this.block(w));
    if (this.failure !== null) return;
    const opId = this.mpi.post(MPI_KIND.split, 0, null, 0, 0, null, 0, 0, 0, 0, 0, 0, 0, 0, ints);
    this.track({ id: opId, done: () => {}, keep: [ints] }, work, timeoutMs);
  }

  async shutdown(): Promise<void> {
    const failed = this.failure !== null;
    this.fail("the process group was destroyed before this operation finished");
    this.failure = "the process group was destroyed";
    // After a failure MPI cannot finalise (a peer is gone or stuck); the process ends without it.
    if (failed || this.finalizing !== null) return;
    const id = this.postFinalize();
    const deadline = performance.now() + FINALIZE_MS;
    while (performance.now() < deadline && !this.mpi.wait(id, 0)) await new Promise((r) => setTimeout(r, 5));
  }

  /**
   * A script that ends without destroyProcessGroup still finalises MPI, which mpirun expects of
   * every rank (else it reports the rank as exiting improperly). Not after a failure, nor when the
   * process exits with an error or amid operations: that rank is dying, and MPI_Finalize would wait
   * for the others.
   */
  private finalizeAtExit(code: number): void {
    if (code !== 0 || this.pending.size > 0 || this.failure !== null || this.finalizing !== null) return;
    const id = this.postFinalize();
    const deadline = performance.now() + Math.min(FINALIZE_MS, this.timeoutMs);
    while (performance.now() < deadline && !this.mpi.wait(id, 100));
  }

  private postFinalize(): number {
    this.finalizing = this.mpi.post(MPI_KIND.finalize, 0, null, 0, 0, null, 0, 0, 0, 0, 0, 0, 0, 0, null);
    return this.finalizing;
  }

  private track(s: { id: number; done: () => void; keep: unknown[] }, work: Work, timeoutMs: number): void {
    if (this.pending.size === 0) {
      this.mpi.ref(true);
      this.timer = setInterval(() => this.watch(), WATCH_MS).unref();
    }
    this.pending.set(s.id, { ...s, work, deadline: performance.now() + timeoutMs, timeoutMs });
  }

  /** Settles every operation MPI's thread finished (it calls this after each batch). */
  private poll(): void {
    for (const p of [...this.pending.values()]) this.settleIfDone(p, 0);
  }

  /** Waits up to `ms` for one operation; settles it if it finished. */
  private settleIfDone(p: Pending, ms: number): void {
    let finished: boolean;
    let error: string | null = null;
    try {
      finished = this.mpi.wait(p.id, ms);
    } catch (err) {
      finished = true;
      error = `${p.work.description} failed on rank ${this.rank} (mpi backend): ${(err as Error).message}`;
    }
    if (!finished) return;
    this.forget(p.id);
    if (error !== null) return this.fail(error, p);
    try {
      p.done();
      p.work.settle(null);
    } catch (err) {
      p.work.settle(err as Error);
    }
  }

  private forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) {
      this.mpi.ref(false);
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Fails the group when an operation is past its timeout or a peer on this host has died. */
  private watch(): void {
    const now = performance.now();
    for (const p of this.pending.values()) {
      if (now > p.deadline) {
        return this.fail(`${p.work.description} did not finish within ${p.timeoutMs} ms on rank ${this.rank} (mpi backend): another rank did not call it, or is stuck`, p);
      }
    }
    const dead = this.deadPeers();
    if (dead === null || this.pending.size === 0) return;
    // A peer may exit just after an operation completed on its side (a rank that fails setup right
    // after the exchange of outcomes): ours may be finishing still, so give it a moment first.
    const graceEnd = performance.now() + DEAD_PEER_GRACE_MS;
    for (const p of [...this.pending.values()]) this.settleIfDone(p, Math.max(0, graceEnd - performance.now()));
    const first = this.pending.values().next().value as Pending | undefined;
    if (first) {
      this.fail(`${first.work.description} failed on rank ${this.rank}: ${dead} (mpi backend: MPI cannot go on without it, so the process group is closed)`, first);
    }
  }

  /**
   * "rank 1 (pid …) exited" for every rank on this host whose process is gone, or null. All of them:
   * a rank that failed because another died may exit too, and the one that died first must be named.
   * Ranks on other hosts are left to mpirun.
   */
  deadPeers(): string | null {
    const me = this.job.hosts[this.rank];
    const dead: string[] = [];
    for (let r = 0; r < this.size; r++) {
      if (r === this.rank || this.job.hosts[r] !== me) continue;
      try {
        process.kill(this.job.pids[r]!, 0);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ESRCH") dead.push(`rank ${r} (pid ${this.job.pids[r]}) exited`);
      }
    }
    return dead.length === 0 ? null : dead.join(", ");
  }

  private block(work: Work): void {
    const p = [...this.pending.values()].find((q) => q.work === work);
    while (p && !work.isCompleted()) {
      this.settleIfDone(p, Math.max(0, Math.min(WATCH_MS, p.deadline - performance.now())));
      if (!work.isCompleted()) this.watch();
    }
    this.poll();
    if (!work.isCompleted()) work.settle(this.failure ?? "internal: the operation was lost");
  }

  /** MPI offers no way to cancel an operation: after a failure the group is unusable. */
  private fail(message: string, cause?: Pending): void {
    if (this.failure === null) this.failure = message;
    const all = [...this.pending.values()];
    if (cause && !all.includes(cause)) all.unshift(cause);
    for (const p of all) {
      this.abandoned.push(p.keep);
      this.forget(p.id);
      p.work.settle(p === cause ? message : `${p.work.description} was abandoned on rank ${this.rank}: ${this.failure}`);
    }
  }
}
