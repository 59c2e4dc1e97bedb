import type { CommClient } from "../comm_client.js";
import type { BufRef, OpMessage, Request } from "../engine/messages.js";
import type { TypedArray } from "../dtypes.js";
import type { OpClient } from "../process_group.js";
import { Work } from "../work.js";
import type { HostLayout } from "./hosts.js";
import type { MpiClient } from "./mpi_client.js";

type Msg = Omit<OpMessage, "id" | "type">;
type AllReduce = Extract<Request, { kind: "allReduce" }>;

/** One operation of this client, in the order the rank posted it. */
interface Entry {
  work: Work;
  /** Posts the next stage if the one before is done; true once nothing more is left to post. */
  step(): boolean;
  /** The stage in flight, if any, that this entry waits on. */
  inFlight(): Work | null;
}

/**
 * The mpi backend's all-reduce for a job across hosts with equally many ranks on each (L), as NCCL
 * and Horovod do it: inside each host, a reduce-scatter over ringtorch's shared memory leaves local
 * rank i with the host's sum of shard i (1/L of the data); between hosts, the ranks with local index
 * i all-reduce shard i over MPI (one communicator per index, so every rank's link carries 1/L of
 * the inter-host bytes); then an all-gather inside the host over shared memory hands every local
 * rank every shard. Every other operation, and all-reduces of newGroup groups, run on MPI.
 *
 * Stages move on when this rank posts an operation, waits, or its event loop runs, so a bucket
 * all-reduce progresses at each later bucket of DDP's backward. MPI runs its operations in the order
 * each rank posts them, and the transport its own: for both orders to be the same on every rank,
 * an operation posts its first stage only once the one before it has posted its last (an
 * all-reduce's all-gather; an MPI operation at once). Operations are thus started in program order.
 */
export class HierClient implements OpClient {
  private readonly queue: Entry[] = [];
  /** Entries with nothing left to post, whose last stage is in flight. */
  private readonly finishing: Entry[] = [];
  private shmSeq = 0;

  constructor(
    private readonly mpi: MpiClient,
    private readonly shm: CommClient,
    private readonly layout: HostLayout,
    /** Group id of the MPI communicator of the ranks with this rank's local index, one per host. */
    private readonly crossGroup: number,
  ) {}

  submit(msg: Msg, description: string, onSettle: (() => void) | null): Work {
    this.pump();
    if (msg.req.kind !== "allReduce" || msg.group !== 0) {
      if (this.queue.length === 0) return this.mpi.submit(msg, description, onSettle);
      return this.enqueue(this.plain(msg, description, onSettle));
    }
    return this.enqueue(this.hierarchical(msg, msg.req, description, onSettle));
  }

  runBlocking(msg: Msg, description: string, onSettle: (() => void) | null): Work {
    return this.submit(msg, description, onSettle);
  }

  private enqueue(entry: Entry): Work {
    this.queue.push(entry);
    this.pump();
    return entry.work;
  }

  /** Posts every stage that can be posted, and settles what finished. */
  private pump(): void {
    this.shm.progress();
    this.mpi.progress();
    for (const e of this.finishing.splice(0)) {
      e.step();
      if (!e.work.isCompleted()) this.finishing.push(e);
    }
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (!head.step()) break;
      this.queue.shift();
      if (!head.work.isCompleted()) this.finishing.push(head);
    }
  }

  /** wait(): waits on the earliest stage in flight, posts what follows, until `work` is done. */
  private block(work: Work): void {
    this.pump();
    while (!work.isCompleted()) {
      const stage = [...this.finishing, ...this.queue].map((e) => e.inFlight()).find((w) => w !== null && !w.isCompleted());
      if (!stage) throw new Error(`internal: ${work.description} has no stage in flight`);
      try {
        stage.wait();
      } catch {
        // The entry that posted the stage reports its failure.
      }
      this.pump();
    }
  }

  private later(): void {
    queueMicrotask(() => this.pump());
  }

  /** An MPI operation posted behind an all-reduce whose MPI stage is not posted yet. */
  private plain(msg: Msg, description: string, onSettle: (() => void) | null): Entry {
    let inner: Work | null = null;
    const work = new Work(description, (w) => this.block(w), onSettle);
    return {
      work,
      inFlight: () => inner,
      step: () => {
        if (inner === null) {
          inner = this.mpi.submit(msg, description, null);
          inner.promise.then(() => work.settle(null), (err: Error) => work.settle(err));
        }
        if (inner.isCompleted()) work.settle(inner.exception());
        return true;
      },
    };
  }

  private hierarchical(msg: Msg, req: AllReduce, description: string, onSettle: (() => void) | null): Entry {
    const work = new Work(description, (w) => this.block(w), onSettle);
    const bufs = req.bufs as BufRef[];
    const numel = bufs.reduce((n, b) => n + b.numel, 0);
    if (numel === 0) {
      work.settle(null);
      return { work, inFlight: () => null, step: () => true };
    }
    const L = this.layout.localSize;
    const chunk = Math.ceil(numel / L);
    const Ctor = bufs[0]!.data.constructor as new (b: SharedArrayBuffer) => TypedArray;
    const shard = new Ctor(new SharedArrayBuffer(chunk * bufs[0]!.data.BYTES_PER_ELEMENT));
    // One buffer that L divides is reduced where it lies; else (DDP's coalesced buckets, odd sizes)
    // through a staging copy padded to L equal pieces. Padding is reduced too and never read.
    const direct = bufs.length === 1 && numel % L === 0;
    const staging = direct ? bufs[0]! : { data: new Ctor(new SharedArrayBuffer(L * chunk * bufs[0]!.data.BYTES_PER_ELEMENT)), offset: 0, numel: L * chunk };
    const pieces: BufRef[] = Array.from({ length: L }, (_, i) => ({ data: staging.data, offset: staging.offset + i * chunk, numel: chunk }));
    const deadline = performance.now() + msg.timeoutMs;
    const left = () => Math.max(1, Math.round(deadline - performance.now()));
    const shmMsg = (r: Request): Msg => ({ group: 0, seq: ++this.shmSeq, dtype: msg.dtype, timeoutMs: left(), algorithm: null, debug: null, req: r });
    const sumOp = req.op === "avg" ? "sum" : req.op;
    const stages = [
      () => {
        if (!direct) copy(bufs, staging.data);
        return this.shm.submit(shmMsg({ kind: "reduceScatter", inputs: pieces, output: { data: shard, offset: 0, numel: chunk }, op: sumOp }), description, null);
      },
      () => {
        const cross: AllReduce = { kind: "allReduce", bufs: [{ data: shard, offset: 0, numel: chunk }], op: req.op, divisor: req.op === "avg" ? (req.divisor ?? this.mpi.size) : undefined };
        return this.mpi.submit({ ...msg, group: this.crossGroup, timeoutMs: left(), req: cross }, description, null);
      },
      () => this.shm.submit(shmMsg({ kind: "allGather", input: { data: shard, offset: 0, numel: chunk }, outputs: pieces }), description, null),
    ];
    let at = -1;
    let current: Work | null = null;
    const step = (): boolean => {
      if (work.isCompleted()) return true;
      while (current === null || current.isCompleted()) {
        if (current !== null && !current.isSuccess()) {
          work.settle(this.explain(description, at, current.exception()!));
          return true;
        }
        if (at === stages.length - 1) {
          if (!direct) copyBack(staging.data, bufs);
          work.settle(null);
          return true;
        }
        current = stages[++at]!();
        current.promise.then(() => this.later(), () => this.later());
      }
      // An operation posted after this one may start once this one's last stage is posted.
      return at === stages.length - 1;
    };
    return { work, inFlight: () => current, step };
  }

  /**
   * A stage's error, as the user's all-reduce: the shared-memory transport numbers this host's
   * ranks from 0, so its message is given as the cause, and a local peer that died is named by its
   * rank in the job.
   */
  private explain(description: string, stage: number, err: Error): string {
    const where = ["reduce-scatter inside the host", "all-reduce between hosts (MPI)", "all-gather inside the host"][stage];
    if (stage === 1) return err.message;
    const dead = this.mpi.deadPeers();
    const cause = `${where}, among ranks ${this.layout.members[this.layout.host]!.join(", ")} (the transport's local ranks 0..${this.layout.localSize - 1}): ${err.message}`;
    return `${description} failed on rank ${this.mpi.rank}: ${dead ? `${dead}; ` : ""}${cause}`;
  }
}

function copy(bufs: BufRef[], to: TypedArray): void {
  let at = 0;
  for (const b of bufs) {
    to.set(b.data.subarray(b.offset, b.offset + b.numel) as never, at);
    at += b.numel;
  }
}

function copyBack(from: TypedArray, bufs: BufRef[]): void {
  let at = 0;
  for (const b of bufs) {
    b.data.set(from.subarray(at, at + b.numel) as never, b.offset);
    at += b.numel;
  }
}
