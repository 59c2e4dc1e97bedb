import { DTYPE_BYTES, DTYPE_CODE, type CommDType, type TypedArray } from "../dtypes.js";
import type { BufRef, OpMessage, Request } from "../engine/messages.js";
import { loadCommNative } from "../native.js";
import { DistributedError, Work } from "../work.js";
import type { MpiNative } from "./mpi_native.js";

const OP_CODE = { sum: 0, avg: 0, product: 1, min: 2, max: 3 } as const;

/** One collective in flight: its MPI request and what to do once MPI is done with it. */
interface Pending {
  id: number;
  work: Work;
  deadline: number;
  timeoutMs: number;
  done: () => void;
}

/**
 * The `mpi` backend's collectives: each request becomes one nonblocking MPI collective on
 * MPI_COMM_WORLD, in the order the ranks call them (MPI matches collectives by order, as ringtorch
 * numbers them). A collective progresses whenever this process tests it: when a Work is waited
 * on, and every millisecond while any is pending, so that DDP's bucket all-reduces move while
 * backward runs. bfloat16 travels widened to float32 and is rounded once at the end, as on the
 * default backend. Only the whole job's group and allReduce, broadcast, allGather and barrier
 * are served; other requests get an error naming the default backend.
 */
export class MpiClient {
  private readonly pending: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private failure: string | null = null;

  constructor(
    private readonly mpi: MpiNative,
    readonly rank: number,
    readonly size: number,
  ) {}

  submit(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    const work = new Work(description, (w) => this.block(w), onSettle);
    if (this.failure !== null) {
      work.settle(this.failure);
      return work;
    }
    try {
      if (msg.group !== 0) throw new Error("the mpi backend runs collectives on the whole job's group only; use the default backend for newGroup()");
      const { id, done } = this.start(msg.req, msg.dtype);
      this.pending.push({ id, work, deadline: performance.now() + msg.timeoutMs, timeoutMs: msg.timeoutMs, done });
      this.progress();
      if (this.pending.length > 0 && this.timer === null) this.timer = setInterval(() => this.progress(), 1);
    } catch (err) {
      work.settle(`${description} failed on rank ${this.rank} (mpi backend): ${(err as Error).message}`);
    }
    return work;
  }

  runBlocking(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    return this.submit(msg, description, onSettle);
  }

  addGroup(): void {
    throw new Error("newGroup: the mpi backend runs collectives on the whole job's group only; use the default backend for groups");
  }

  async shutdown(): Promise<void> {
    for (const p of this.pending) p.work.settle("the process group was destroyed before this operation finished");
    this.pending.length = 0;
    this.stopTimer();
    this.failure = "the process group was destroyed";
    this.mpi.finalize();
  }

  /** Starts `req` in MPI; `done` copies results where they belong once MPI finished. */
  private start(req: Request, dtype: CommDType): { id: number; done: () => void } {
    const code = DTYPE_CODE[dtype];
    switch (req.kind) {
      case "allReduce": {
        const bufs = req.bufs as BufRef[];
        const divisor = req.op === "avg" ? (req.divisor ?? this.size) : 1;
        // One buffer of a dtype MPI knows reduces in place; 16-bit floats or several buffers through
        // a staging copy. MPI has no 16-bit float types: bfloat16 and float16 (lowPrecision or not)
        // travel as float32 and are rounded once, twice the bytes of the default backend's lowPrecision.
        const half = dtype === "bfloat16" || dtype === "float16";
        if (bufs.length === 1 && !half) {
          const b = bufs[0]!;
          const e = DTYPE_BYTES[dtype];
          const id = this.mpi.iallReduce(b.data, b.offset * e, b.numel, code, OP_CODE[req.op]);
          return { id, done: () => divisor !== 1 && loadCommNative().divideBy(code, b.data, b.offset * e, b.numel, divisor) };
        }
        const wide = half ? "float32" : dtype;
        const stage = gather(bufs, dtype, wide);
        const id = this.mpi.iallReduce(stage, 0, stage.length, DTYPE_CODE[wide], OP_CODE[req.op]);
        return {
          id,
          done: () => {
            if (divisor !== 1) loadCommNative().divideBy(DTYPE_CODE[wide], stage, 0, stage.length, divisor);
            scatter(stage, bufs, dtype);
          },
        };
      }
      case "broadcast": {
        const b = req.buf;
        const e = DTYPE_BYTES[dtype];
        // 16-bit floats move as bytes: a broadcast copies, it does not compute.
        const [n, c] = dtype === "bfloat16" || dtype === "float16" ? [b.numel * e, DTYPE_CODE.uint8] : [b.numel, code];
        return { id: this.mpi.ibroadcast(b.data, b.offset * e, n, c, req.root), done: () => {} };
      }
      case "allGather": {
        const e = DTYPE_BYTES[dtype];
        const n = req.input.numel * e;
        const out = new Uint8Array(n * this.size);
        const id = this.mpi.iallGather(req.input.data, req.input.offset * e, out, 0, n, DTYPE_CODE.uint8);
        return {
          id,
          done: () => req.outputs.forEach((o, r) => bytesOf(o, dtype).set(out.subarray(r * n, (r + 1) * n))),
        };
      }
      case "barrier":
        return { id: this.mpi.ibarrier(), done: () => {} };
      default:
        throw new Error(`${req.kind} is not served by the mpi backend (it serves allReduce, broadcast, allGather and barrier); use the default backend`);
    }
  }

  /** Tests the pending collectives in the order they started; settles those MPI finished. */
  private progress(): void {
    while (this.pending.length > 0) {
      const p = this.pending[0]!;
      let finished: boolean;
      try {
        finished = this.mpi.test(p.id);
      } catch (err) {
        this.fail(`${p.work.description} failed on rank ${this.rank} (mpi backend): ${(err as Error).message}`);
        return;
      }
      if (!finished) {
        if (performance.now() > p.deadline) {
          this.fail(`${p.work.description} did not finish within ${p.timeoutMs} ms on rank ${this.rank} (mpi backend): another rank did not call it, or died`);
        }
        break;
      }
      this.pending.shift();
      try {
        p.done();
        p.work.settle(null);
      } catch (err) {
        p.work.settle(err as Error);
      }
    }
    if (this.pending.length === 0) this.stopTimer();
  }

  private block(work: Work): void {
    while (!work.isCompleted() && this.pending.length > 0) this.progress();
    if (!work.isCompleted()) work.settle(this.failure ?? "internal: the operation was lost");
  }

  /** MPI offers no way to cancel a collective: after a failure or timeout the group is unusable. */
  private fail(message: string): void {
    this.failure = message;
    for (const p of this.pending.splice(0)) p.work.settle(message);
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

function bytesOf(b: BufRef, dtype: CommDType): Uint8Array {
  const e = DTYPE_BYTES[dtype];
  return new Uint8Array(b.data.buffer, b.data.byteOffset + b.offset * e, b.numel * e);
}

/** The buffers one after another, bfloat16 widened to float32. */
function gather(bufs: BufRef[], dtype: CommDType, wide: CommDType): TypedArray {
  const total = bufs.reduce((n, b) => n + b.numel, 0);
  const native = loadCommNative();
  if (dtype === "bfloat16" || dtype === "float16") {
    const out = new Float32Array(total);
    const widen = dtype === "bfloat16" ? native.bf16ToF32 : native.f16ToF32;
    let at = 0;
    for (const b of bufs) {
      widen(b.data as Uint16Array, b.offset, out, at, b.numel);
      at += b.numel;
    }
    return out;
  }
  const out = new Uint8Array(total * DTYPE_BYTES[wide]);
  let at = 0;
  for (const b of bufs) {
    const src = bytesOf(b, dtype);
    out.set(src, at);
    at += src.length;
  }
  return viewAs(out, wide);
}

function scatter(stage: TypedArray, bufs: BufRef[], dtype: CommDType): void {
  const native = loadCommNative();
  let at = 0;
  for (const b of bufs) {
    if (dtype === "bfloat16") native.f32ToBf16(stage as Float32Array, at, b.data as Uint16Array, b.offset, b.numel);
    else if (dtype === "float16") native.f32ToF16(stage as Float32Array, at, b.data as Uint16Array, b.offset, b.numel);
    else bytesOf(b, dtype).set(new Uint8Array(stage.buffer, stage.byteOffset + at * DTYPE_BYTES[dtype], b.numel * DTYPE_BYTES[dtype]));
    at += b.numel;
  }
}

function viewAs(bytes: Uint8Array, dtype: CommDType): TypedArray {
  switch (dtype) {
    case "float64":
      return new Float64Array(bytes.buffer);
    case "int32":
      return new Int32Array(bytes.buffer);
    case "uint8":
      return bytes;
    default:
      return new Float32Array(bytes.buffer);
  }
}
