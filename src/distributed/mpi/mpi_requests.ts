import { DTYPE_BYTES, DTYPE_CODE, type CommDType } from "../dtypes.js";
import type { BufRef, Request } from "../engine/messages.js";
import { loadCommNative } from "../native.js";
import { MPI_KIND, type MpiNative } from "./mpi_native.js";

/** MPI_Op codes of native/mpi (avg is a sum, divided afterwards). */
export const OP_CODE = { sum: 0, avg: 0, product: 1, min: 2, max: 3 } as const;
const BYTES = DTYPE_CODE.uint8;
const INT_MAX = 0x7fffffff;

/** One request handed to MPI: its operation id, what to do once it finished, and what it points into. */
export interface Started {
  id: number;
  done: () => void;
  /** Arrays MPI's thread writes or reads until the operation is done; kept alive until then. */
  keep: unknown[];
}

/** Where a request's group runs: its communicator (the group's id), size and this rank's place in it. */
export interface Place {
  comm: number;
  size: number;
  rank: number;
  tagUpperBound: number;
}

/** Bytes at an absolute position of an array's memory (the whole buffer, so that several views can share one). */
interface Region {
  data: Uint8Array;
  offset: number;
  bytes: number;
}

function region(b: BufRef, dtype: CommDType): Region {
  const e = DTYPE_BYTES[dtype];
  return { data: new Uint8Array(b.data.buffer), offset: b.data.byteOffset + b.offset * e, bytes: b.numel * e };
}

/** The buffers as one region when they lie back to back in one array's memory (allGatherIntoTensor's output, …). */
function joined(bufs: BufRef[], dtype: CommDType): Region | null {
  if (bufs.length === 0) return null;
  const first = region(bufs[0]!, dtype);
  let end = first.offset + first.bytes;
  for (const b of bufs.slice(1)) {
    const r = region(b, dtype);
    if (b.data.buffer !== bufs[0]!.data.buffer || r.offset !== end) return null;
    end += r.bytes;
  }
  return { data: first.data, offset: first.offset, bytes: end - first.offset };
}

/** The buffers back to back: in place where they already are, else in a fresh staging copy. */
function packed(bufs: BufRef[], dtype: CommDType): { r: Region; staged: boolean } {
  const j = joined(bufs, dtype);
  if (j) return { r: j, staged: false };
  const parts = bufs.map((b) => region(b, dtype));
  const data = new Uint8Array(parts.reduce((n, p) => n + p.bytes, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p.data.subarray(p.offset, p.offset + p.bytes), at);
    at += p.bytes;
  }
  return { r: { data, offset: 0, bytes: data.length }, staged: true };
}

function unpack(from: Region, bufs: BufRef[], dtype: CommDType): void {
  let at = from.offset;
  for (const b of bufs) {
    const r = region(b, dtype);
    r.data.set(from.data.subarray(at, at + r.bytes), r.offset);
    at += r.bytes;
  }
}

export const isHalf = (dtype: CommDType) => dtype === "bfloat16" || dtype === "float16";

/** The 16-bit float buffers back to back into `to`, widened to float32 (MPI has no 16-bit float types). */
export function widenHalves(bufs: BufRef[], dtype: CommDType, to: Float32Array, at = 0): void {
  const native = loadCommNative();
  const widen = dtype === "bfloat16" ? native.bf16ToF32 : native.f16ToF32;
  for (const b of bufs) {
    widen(b.data as Uint16Array, b.offset, to, at, b.numel);
    at += b.numel;
  }
}

/** The reverse of widenHalves: `from`'s float32 values rounded once into the 16-bit buffers. */
export function narrowHalves(from: Float32Array, bufs: BufRef[], dtype: CommDType, at = 0): void {
  const native = loadCommNative();
  const narrow = dtype === "bfloat16" ? native.f32ToBf16 : native.f32ToF16;
  for (const b of bufs) {
    narrow(from, at, b.data as Uint16Array, b.offset, b.numel);
    at += b.numel;
  }
}

/**
 * What a reduction adds up: the buffers themselves where MPI knows their type and they lie back
 * to back, else a staging copy. MPI has no 16-bit float types: bfloat16 and float16 are widened
 * to float32 and rounded once at the end (twice the bytes of the default backend's lowPrecision).
 */
function reducible(bufs: BufRef[], dtype: CommDType): { r: Region; code: number; back: () => void } {
  if (!isHalf(dtype)) {
    const { r, staged } = packed(bufs, dtype);
    return { r, code: DTYPE_CODE[dtype], back: staged ? () => unpack(r, bufs, dtype) : () => {} };
  }
  const wide = new Float32Array(bufs.reduce((n, b) => n + b.numel, 0));
  widenHalves(bufs, dtype, wide);
  const back = () => narrowHalves(wide, bufs, dtype);
  return { r: { data: new Uint8Array(wide.buffer), offset: 0, bytes: wide.byteLength }, code: DTYPE_CODE.float32, back };
}

function divide(r: Region, code: number, divisor: number): void {
  if (divisor === 1) return;
  const e = code === DTYPE_CODE.float64 ? 8 : 4;
  loadCommNative().divideBy(code, r.data, r.offset, r.bytes / e, divisor);
}

const elementBytes = (code: number) => (code === DTYPE_CODE.float64 ? 8 : code === DTYPE_CODE.float32 || code === DTYPE_CODE.int32 ? 4 : 1);

/** Starts `req` on MPI's thread. Roots are group ranks; a point-to-point peer is a global rank (the world communicator's). */
export function startRequest(mpi: MpiNative, at: Place, req: Request, dtype: CommDType): Started {
  const none = null as Region | null;
  const post = (kind: number, a: Region | null, b: Region | null, count: number, code: number, extra: { op?: number; root?: number; peer?: number; tag?: number; ints?: Int32Array; comm?: number } = {}) => {
    if (count > INT_MAX) throw new Error(`${req.kind} of ${count} elements: MPI counts stop at 2^31-1; split the tensor`);
    const keep = [a?.data, b?.data, extra.ints];
    const id = mpi.post(kind, extra.comm ?? at.comm, a?.data ?? null, a?.offset ?? 0, a?.bytes ?? 0, b?.data ?? null, b?.offset ?? 0, b?.bytes ?? 0, count, code, extra.op ?? 0, extra.root ?? 0, extra.peer ?? 0, extra.tag ?? 0, extra.ints ?? null);
    return { id, keep };
  };
  switch (req.kind) {
    case "allReduce":
    case "reduce": {
      const bufs = (req.kind === "allReduce" ? req.bufs : [req.buf]) as BufRef[];
      if (bufs.some((b) => !("data" in b))) throw new Error("internal: the mpi backend takes arrays, not addresses");
      const { r, code, back } = reducible(bufs, dtype);
      const root = req.kind === "reduce" ? req.root : -1;
      const divisor = req.op === "avg" ? ((req as { divisor?: number }).divisor ?? at.size) : 1;
      const { id, keep } = post(req.kind === "reduce" ? MPI_KIND.reduce : MPI_KIND.allReduce, r, none, r.bytes / elementBytes(code), code, { op: OP_CODE[req.op], root });
      const mine = root < 0 || root === at.rank;
      return { id, keep, done: () => mine && (divide(r, code, divisor), back()) };
    }
    case "reduceScatter": {
      const input = reducible(req.inputs, dtype);
      const output = reducible([req.output], dtype);
      const count = output.r.bytes / elementBytes(output.code);
      const { id, keep } = post(MPI_KIND.reduceScatter, input.r, output.r, count, output.code, { op: OP_CODE[req.op] });
      return { id, keep, done: () => (divide(output.r, output.code, req.op === "avg" ? at.size : 1), output.back()) };
    }
    case "broadcast": {
      // Moves bytes: a broadcast copies, it does not compute.
      const r = region(req.buf, dtype);
      return { ...post(MPI_KIND.broadcast, r, none, r.bytes, BYTES, { root: req.root }), done: () => {} };
    }
    case "allGather": {
      const input = region(req.input, dtype);
      const { r, staged } = packed(req.outputs, dtype);
      const { id, keep } = post(MPI_KIND.allGather, input, r, input.bytes, BYTES);
      return { id, keep, done: () => staged && unpack(r, req.outputs, dtype) };
    }
    case "gather": {
      const input = region(req.input, dtype);
      const out = req.outputs ? packed(req.outputs, dtype) : null;
      const { id, keep } = post(MPI_KIND.gather, input, out?.r ?? none, input.bytes, BYTES, { root: req.root });
      return { id, keep, done: () => out?.staged && unpack(out.r, req.outputs!, dtype) };
    }
    case "scatter": {
      const output = region(req.output, dtype);
      const input = req.inputs ? packed(req.inputs, dtype).r : none;
      return { ...post(MPI_KIND.scatter, input, output, output.bytes, BYTES, { root: req.root }), done: () => {} };
    }
    case "allToAll": {
      const e = DTYPE_BYTES[dtype];
      const n = at.size;
      const ints = new Int32Array(4 * n);
      let s = 0;
      let d = 0;
      req.inputs.forEach((b, r) => ((ints[r] = b.numel * e), (ints[n + r] = s), (s += b.numel * e)));
      req.outputs.forEach((b, r) => ((ints[2 * n + r] = b.numel * e), (ints[3 * n + r] = d), (d += b.numel * e)));
      if (s > INT_MAX || d > INT_MAX) throw new Error("allToAll: the mpi backend moves at most 2 GiB per rank in one all-to-all");
      const input = packed(req.inputs, dtype).r;
      const out = packed(req.outputs, dtype);
      const { id, keep } = post(MPI_KIND.allToAll, input, out.r, 0, BYTES, { ints });
      return { id, keep, done: () => out.staged && unpack(out.r, req.outputs, dtype) };
    }
    case "barrier":
      return { ...post(MPI_KIND.barrier, none, none, 0, BYTES), done: () => {} };
    case "send":
    case "recv": {
      const where = req.kind === "send" ? "isend" : "irecv";
      if (req.tag > at.tagUpperBound) {
        throw new Error(`${where}: tag ${req.tag} is above the largest tag this MPI library carries (MPI_TAG_UB = ${at.tagUpperBound}); the mpi backend cannot express it: use a smaller tag`);
      }
      // Only CommClient turns a point-to-point buffer into an address; this backend gets the BufRef.
      const r = region(req.buf as BufRef, dtype);
      return { ...post(req.kind === "send" ? MPI_KIND.send : MPI_KIND.recv, r, none, r.bytes, BYTES, { peer: req.peer, tag: req.tag, comm: 0 }), done: () => {} };
    }
  }
}
