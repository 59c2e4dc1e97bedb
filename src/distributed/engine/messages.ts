import { type CommDType, DTYPE_CODE, type TypedArray } from "../dtypes.js";
import type { ReduceOpName } from "../reduce_op.js";
import type { CommTraceTag } from "../../util/trace.js";

/** Elements [offset, offset + numel) of a typed array; the array is SharedArrayBuffer-backed. */
export interface BufRef {
  data: TypedArray;
  offset: number;
  numel: number;
}

/**
 * Elements at an address in this process, in place of a BufRef: the comm worker then holds no
 * handle to the memory, which the main thread keeps alive until the operation is reported done.
 * Each step's fresh gradients would otherwise stay alive until this thread's rare collections.
 */
export interface AddressRef {
  address: number;
  numel: number;
}

export type Algorithm = "ring" | "rhd" | "tree";

/** Roots and ranks inside a request are group ranks, except a point-to-point peer, which is global. */
export type Request =
  /**
   * One all-reduce over the concatenation of `bufs`, in place (several: allReduceCoalesced).
   * lowPrecision: a bfloat16 sum travels and accumulates in bfloat16 (half the bytes of float32).
   * divisor: what AVG divides by, when not the group size (DDP under join()).
   */
  | { kind: "allReduce"; bufs: (BufRef | AddressRef)[]; op: ReduceOpName; lowPrecision?: boolean; divisor?: number }
  | { kind: "broadcast"; buf: BufRef; root: number }
  | { kind: "reduce"; buf: BufRef; root: number; op: ReduceOpName }
  | { kind: "allGather"; input: BufRef; outputs: BufRef[] }
  | { kind: "reduceScatter"; inputs: BufRef[]; output: BufRef; op: ReduceOpName }
  | { kind: "scatter"; inputs: BufRef[] | null; output: BufRef; root: number }
  | { kind: "gather"; input: BufRef; outputs: BufRef[] | null; root: number }
  | { kind: "allToAll"; inputs: BufRef[]; outputs: BufRef[] }
  | { kind: "barrier" }
  /** A point-to-point buffer goes by address from CommClient (its worker holds no handle: comm_client.ts, byAddress). */
  | { kind: "send"; buf: BufRef | AddressRef; peer: number; tag: number }
  | { kind: "recv"; buf: BufRef | AddressRef; peer: number; tag: number };

export type RequestKind = Request["kind"];

export const KIND_CODE: Record<RequestKind, number> = {
  allReduce: 1,
  broadcast: 2,
  reduce: 3,
  allGather: 4,
  reduceScatter: 5,
  scatter: 6,
  gather: 7,
  allToAll: 8,
  barrier: 9,
  send: 10,
  recv: 10,
};
export const DEBUG_CODE = 15;

export function isPointToPoint(req: Request): req is Extract<Request, { kind: "send" | "recv" }> {
  return req.kind === "send" || req.kind === "recv";
}

/**
 * Order across threads, for the mpi backend's hierarchical all-reduce (mpi/hier_client.ts): the
 * worker waits until flags[wait] is non-zero before it runs the operation (negative: abandoned, the
 * operation fails), and sets flags[signal] once it ran. MPI's thread sits between the two, so that
 * the three steps follow one another without the main thread. `flags` is SharedArrayBuffer-backed.
 */
export interface OpGate {
  flags: Int32Array;
  wait?: number;
  signal?: number;
}

export interface OpMessage {
  type: "op";
  id: number;
  group: number;
  /** Per-group sequence number of collectives (point-to-point operations do not count). */
  seq: number;
  dtype: CommDType;
  timeoutMs: number;
  algorithm: Algorithm | null;
  /** What this rank called, for RINGTORCH_DISTRIBUTED_DEBUG=DETAIL; null when the check is off. */
  debug: string | null;
  req: Request;
  /** While tracing: the DDP bucket this collective reduces, or the pipeline message a send/recv carries (the comm thread's span names it). */
  trace?: CommTraceTag;
  gate?: OpGate;
}

export interface GroupMessage {
  type: "group";
  id: number;
  ranks: number[];
}

/**
 * A send or receive by address in eight numbers (p2pWire, p2pFromWire): [id, group, dtype code,
 * timeoutMs, peer, tag, address, numel] with the sign of the peer giving the kind (a receive's is
 * −1 − peer). A pipeline posts one per activation and gradient, and the structured clone of an
 * OpMessage (nested objects, their property names looked up each time) cost the two threads more
 * than moving the bytes did; an array of numbers is copied as such.
 */
export type P2PWire = number[];

export type ToWorker =
  | P2PWire
  | OpMessage
  | GroupMessage
  | { type: "shutdown" }
  /** The main thread ran this collective itself (InlineRunner). */
  | { type: "ran"; group: number; seq: number }
  /** The main thread's collective failed: compose the error (it needs the store) and close the group. */
  | { type: "explain"; id: number; op: OpMessage; status: number; detail: string };

export type FromWorker =
  /** An operation finished without error: its id alone (the common case, cheapest to pass). */
  | number
  | { type: "ready"; handle: number; transports: ("self" | "shm" | "tcp")[] }
  | { type: "setupError"; message: string }
  | { type: "segment"; name: string; linked: boolean }
  /** `fatal`: the group is closed after this error; later requests fail at once. */
  | { type: "done"; id: number; error: string | null; fatal?: boolean }
  | { type: "fatal"; message: string }
  | { type: "closed" };

/** Indices into the Int32Array both threads share. */
export const CTL_OPS_POSTED = 0;
export const CTL_DONE_POSTED = 1;
export const CTL_LENGTH = 4;

export interface WorkerConfig {
  rank: number;
  world: number;
  token: string;
  storeHost: string;
  storePort: number;
  prefix: string;
  timeoutMs: number;
  transport: "auto" | "shm" | "tcp";
  /** The one address TCP transports listen on; null: the local address of the store connection. */
  listenHost: string | null;
  /** TCP connections per pair of ranks, and the message size from which they share a message. */
  tcpStreams: number;
  stripeBytes: number;
  /** Each TCP socket's send and receive buffer; 0 leaves them to the kernel's autotuning. */
  tcpBufferBytes: number;
  slotBytes: number;
  slots: number;
  spinUs: number;
  streamingBytes: number;
  pipelineBytes: number;
  algorithm: Algorithm | null;
}

const DTYPE_BY_CODE = Object.fromEntries(Object.entries(DTYPE_CODE).map(([k, v]) => [v, k])) as Record<number, CommDType>;

/** The wire form of a send or receive whose buffer is an address, or null when it needs the full message (tracing tags it). */
export function p2pWire(id: number, msg: Omit<OpMessage, "id" | "type">): P2PWire | null {
  const req = msg.req;
  if ((req.kind !== "send" && req.kind !== "recv") || !("address" in req.buf) || msg.trace || msg.gate) return null;
  const peer = req.kind === "send" ? req.peer : -1 - req.peer;
  return [id, msg.group, DTYPE_CODE[msg.dtype], msg.timeoutMs, peer, req.tag, req.buf.address, req.buf.numel];
}

export function p2pFromWire(w: P2PWire): OpMessage {
  const [id, group, dtype, timeoutMs, peer, tag, address, numel] = w as [number, number, number, number, number, number, number, number];
  const buf = { address, numel };
  const req: Request = peer >= 0 ? { kind: "send", buf, peer, tag } : { kind: "recv", buf, peer: -1 - peer, tag };
  return { type: "op", id, group, seq: 0, dtype: DTYPE_BY_CODE[dtype]!, timeoutMs, algorithm: null, debug: null, req };
}
