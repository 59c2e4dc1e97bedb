import type { CommClient } from "../comm_client.js";
import { DTYPE_BYTES, DTYPE_CODE, type CommDType, type TypedArray } from "../dtypes.js";
import type { BufRef, OpGate, OpMessage, Request } from "../engine/messages.js";
import { loadCommNative } from "../native.js";
import type { OpClient } from "../process_group.js";
import { Work } from "../work.js";
import { HierScratchPool } from "./hier_buffers.js";
import type { HostLayout } from "./hosts.js";
import type { MpiClient } from "./mpi_client.js";
import { MPI_KIND } from "./mpi_native.js";
import { OP_CODE, isHalf, narrowHalves, widenHalves } from "./mpi_requests.js";

type Msg = Omit<OpMessage, "id" | "type">;
type AllReduce = Extract<Request, { kind: "allReduce" }>;

/**
 * The mpi backend's all-reduce for a job across hosts with equally many ranks on each (L), as NCCL
 * and Horovod do it: inside each host, a reduce-scatter over ringtorch's shared memory leaves local
 * rank i with the host's sum of shard i (1/L of the data); between hosts, the ranks with local index
 * i all-reduce shard i over MPI (one communicator per index, so every rank's link carries 1/L of
 * the inter-host bytes); then an all-gather inside the host over shared memory gives every local
 * rank every shard. Every other operation, and all-reduces of newGroup groups, run on MPI alone.
 *
 * The three steps are posted at once, in the order the rank calls its operations (so the transport's
 * queue and MPI's are in the same order on every rank), and follow one another through a gate in
 * shared memory: the transport's thread opens it after the reduce-scatter, MPI's thread waits on it,
 * all-reduces and opens the next, on which the all-gather waits. No step needs the main thread, so
 * DDP's buckets reduce while backward runs, as on one host.
 */
export class HierClient implements OpClient {
  private shmSeq = 0;
  private readonly scratch = new HierScratchPool();

  constructor(
    private readonly mpi: MpiClient,
    private readonly shm: CommClient,
    private readonly layout: HostLayout,
    /** Group id of the MPI communicator of the ranks with this rank's local index, one per host. */
    private readonly crossGroup: number,
  ) {}

  submit(msg: Msg, description: string, onSettle: (() => void) | null): Work {
    if (msg.req.kind !== "allReduce" || msg.group !== 0) return this.mpi.submit(msg, description, onSettle);
    return this.hierarchical(msg, msg.req, description, onSettle);
  }

  runBlocking(msg: Msg, description: string, onSettle: (() => void) | null): Work {
    return this.submit(msg, description, onSettle);
  }

  private hierarchical(msg: Msg, req: AllReduce, description: string, onSettle: (() => void) | null): Work {
    const bufs = req.bufs as BufRef[];
    const numel = bufs.reduce((n, b) => n + b.numel, 0);
    if (numel === 0) {
      const done = new Work(description, () => {}, onSettle);
      done.settle(null);
      return done;
    }
    const L = this.layout.localSize;
    // MPI has no 16-bit float types: those are reduced as float32 throughout and rounded once.
    const dtype: CommDType = isHalf(msg.dtype) ? "float32" : msg.dtype;
    const ctor = (dtype === "float32" ? Float32Array : bufs[0]!.data.constructor) as new (b: SharedArrayBuffer) => TypedArray;
    // One buffer is reduced where it lies, in L equal pieces; the few elements (< L) left over go
    // to MPI_Allreduce on the world alone. Several buffers (DDP's coalesced buckets) and 16-bit
    // floats go through a staging copy padded to L equal pieces, whose padding is never read: that
    // copy back is the one step left to the main thread, when it waits.
    const direct = !isHalf(msg.dtype) && bufs.length === 1 && numel >= L;
    const chunk = direct ? Math.floor(numel / L) : Math.ceil(numel / L);
    const scratch = this.scratch.take(ctor, dtype, direct ? 0 : L * chunk, chunk);
    const staging: BufRef = direct ? { ...bufs[0]!, numel: L * chunk } : { data: scratch.staging!, offset: 0, numel: L * chunk };
    if (!direct) stageIn(bufs, staging.data, msg.dtype);
    const rest = direct ? numel - L * chunk : 0;
    const divisor = req.divisor ?? this.mpi.size;
    const tail =
      rest === 0
        ? null
        : this.mpi.submit({ ...msg, req: { kind: "allReduce", bufs: [{ ...bufs[0]!, offset: bufs[0]!.offset + L * chunk, numel: rest }], op: req.op, divisor } }, description, null);
    const pieces: BufRef[] = Array.from({ length: L }, (_, i) => ({ data: staging.data, offset: staging.offset + i * chunk, numel: chunk }));
    const shard: BufRef = { data: scratch.shard, offset: 0, numel: chunk };
    const gate = scratch.gate;
    const shmMsg = (r: Request, g: OpGate): Msg => ({ group: 0, seq: ++this.shmSeq, dtype, timeoutMs: msg.timeoutMs, algorithm: null, debug: null, req: r, gate: g });

    const scatter = this.shm.submit(shmMsg({ kind: "reduceScatter", inputs: pieces, output: shard, op: req.op === "avg" ? "sum" : req.op }, { flags: gate, signal: 0 }), description, null);
    // MPI's thread may wait up to the timeout for the reduce-scatter, then as long again for MPI.
    const across = this.mpi.submitPosted(this.crossGroup, description, 2 * msg.timeoutMs, (mpi, place) => ({
      id: mpi.post(MPI_KIND.gatedAllReduce, place.comm, shard.data, 0, shard.data.byteLength, gate, 0, 8, chunk, DTYPE_CODE[dtype], OP_CODE[req.op], 0, 0, Math.min(msg.timeoutMs, 0x7fffffff), null),
      keep: [shard.data, gate],
      done: () => {},
    }));
    const gather = this.shm.submit(shmMsg({ kind: "allGather", input: shard, outputs: pieces }, { flags: gate, wait: 1 }), description, null);

    const work = new Work(description, () => block(), onSettle);
    const finish = () => {
      if (work.isCompleted()) return;
      // A failed step abandons the ones after it, so that neither thread waits out its timeout.
      if (scatter.isCompleted() && !scatter.isSuccess()) {
        Atomics.compareExchange(gate, 0, 0, -1);
        Atomics.compareExchange(gate, 1, 0, -1);
        return work.settle(this.explain(description, "the reduce-scatter inside the host", scatter.exception()!));
      }
      if (across.isCompleted() && !across.isSuccess()) {
        Atomics.compareExchange(gate, 1, 0, -1);
        return work.settle(across.exception()!);
      }
      if (tail?.isCompleted() && !tail.isSuccess()) return work.settle(tail.exception()!);
      // MPI's step too: its thread opens the gather's gate before MPI reports the request done,
      // and the scratch is reused only after every thread is through with it.
      if (!gather.isCompleted() || !across.isCompleted() || (tail && !tail.isCompleted())) return;
      if (!gather.isSuccess()) return work.settle(this.explain(description, "the all-gather inside the host", gather.exception()!));
      try {
        if (req.op === "avg") divide(staging, dtype, divisor);
        if (!direct) stageOut(staging.data, bufs, msg.dtype);
        this.scratch.give(scratch);
        work.settle(null);
      } catch (err) {
        work.settle(err as Error);
      }
    };
    // wait(): each step's own wait watches what can fail it (MPI's: the local peers' pids too).
    const block = () => {
      for (const step of [tail, scatter, across, gather]) {
        if (!step) continue;
        try {
          step.wait();
        } catch {
          // finish() reports the first step that failed.
        }
        finish();
        if (work.isCompleted()) return;
      }
    };
    for (const step of [tail, scatter, across, gather]) step?.promise.then(finish, finish);
    return work;
  }

  /**
   * A step's error, as the user's all-reduce: the shared-memory transport numbers this host's ranks
   * from 0, so its message is the cause, and a local peer that died is named by its rank in the job.
   */
  private explain(description: string, step: string, err: Error): string {
    const dead = this.mpi.deadPeers();
    const ranks = this.layout.members[this.layout.host]!;
    const cause = `${step}, among ranks ${ranks.join(", ")} (the transport's ranks 0..${ranks.length - 1} there): ${err.message}`;
    return `${description} failed on rank ${this.mpi.rank}: ${dead ? `${dead}; ` : ""}${cause}`;
  }
}

/** The buffers back to back into `to` (16-bit floats widened to float32). */
function stageIn(bufs: BufRef[], to: TypedArray, dtype: CommDType): void {
  if (isHalf(dtype)) return widenHalves(bufs, dtype, to as Float32Array);
  let at = 0;
  for (const b of bufs) {
    to.set(b.data.subarray(b.offset, b.offset + b.numel) as never, at);
    at += b.numel;
  }
}

function stageOut(from: TypedArray, bufs: BufRef[], dtype: CommDType): void {
  if (isHalf(dtype)) return narrowHalves(from as Float32Array, bufs, dtype);
  let at = 0;
  for (const b of bufs) {
    b.data.set(from.subarray(at, at + b.numel) as never, b.offset);
    at += b.numel;
  }
}

/** AVG: the sum over all ranks divided once at the end, as the other paths do. */
function divide(b: BufRef, dtype: CommDType, divisor: number): void {
  if (divisor === 1) return;
  const e = DTYPE_BYTES[dtype];
  loadCommNative().divideBy(DTYPE_CODE[dtype], new Uint8Array(b.data.buffer), b.data.byteOffset + b.offset * e, b.numel, divisor);
}
