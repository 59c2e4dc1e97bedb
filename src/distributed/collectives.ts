import type { Work } from "./work.js";
import type { Request } from "./engine/messages.js";
import type { CommDType } from "./dtypes.js";
import {
  type Async,
  type CollectiveOptions,
  divisorOf,
  finishersOf,
  groupOf,
  reduceOpOf,
  type ReduceOptions,
  runOptions,
  sameDType,
  type Sync,
  REDUCE_KEYS,
} from "./options.js";
import { type CommTensor, describe, type Resolved, resolve, shapeText } from "./tensor_ref.js";

/**
 * The reducing and broadcasting collectives, in torch.distributed's names (camelCase). Each
 * runs synchronously unless called with `{async: true}`, which returns a Work. Roots (`src`,
 * `dst`) are global ranks, as in torch. Data moves in place in the tensors' shared memory.
 */

/** Every rank's tensor becomes the reduction over all ranks' tensors. */
export function allReduce(tensor: CommTensor, opts?: Sync<ReduceOptions>): void;
export function allReduce(tensor: CommTensor, opts: Async<ReduceOptions>): Work;
export function allReduce(tensor: CommTensor, opts?: ReduceOptions): Work | void;
export function allReduce(tensor: CommTensor, opts?: ReduceOptions): Work | void {
  const where = "allReduce";
  const group = groupOf(opts, where, REDUCE_KEYS);
  const t = resolve(tensor, where, true);
  const dtype = reducedDType(t.dtype, opts, where);
  const op = reduceOpOf(opts, dtype, where);
  const req: Request = { kind: "allReduce", bufs: [t.ref], op, lowPrecision: opts?.lowPrecision === true, divisor: divisorOf(opts, op, where) };
  return group.run(req, dtype, runOptions(opts), `allReduce(dtype=${dtype}, shape=${shapeText(t.shape)}, op=${op})`, finishersOf([t]));
}

/**
 * All-reduces several tensors of one dtype as a single collective over their concatenation, in
 * place, without packing them into one buffer first (torch.distributed.all_reduce_coalesced).
 * DDP reduces each gradient bucket this way, straight in the parameters' `.grad` tensors.
 */
export function allReduceCoalesced(tensors: readonly CommTensor[], opts?: Sync<ReduceOptions>): void;
export function allReduceCoalesced(tensors: readonly CommTensor[], opts: Async<ReduceOptions>): Work;
export function allReduceCoalesced(tensors: readonly CommTensor[], opts?: ReduceOptions): Work | void;
export function allReduceCoalesced(tensors: readonly CommTensor[], opts?: ReduceOptions): Work | void {
  const where = "allReduceCoalesced";
  const group = groupOf(opts, where, REDUCE_KEYS);
  if (!Array.isArray(tensors) || tensors.length === 0) throw new TypeError(`${where}: expected a non-empty array of tensors, got ${describe(tensors)}`);
  const ts = tensors.map((x, i) => resolve(x, `${where}: tensors[${i}]`, true));
  sameDType(where, ts[0]!, ts.slice(1), "tensors", 1);
  checkDisjoint(ts, where);
  const dtype = reducedDType(ts[0]!.dtype, opts, where);
  const op = reduceOpOf(opts, dtype, where);
  const req: Request = { kind: "allReduce", bufs: ts.map((t) => t.ref), op, lowPrecision: opts?.lowPrecision === true, divisor: divisorOf(opts, op, where) };
  const shapes = ts.map((t) => shapeText(t.shape)).join(", ");
  return group.run(req, dtype, runOptions(opts), `allReduceCoalesced(dtype=${dtype}, shapes=[${shapes}], op=${op})`, finishersOf(ts));
}

/** The dtype a reduction runs in: float16 bits travel in bfloat16-sized storage. */
function reducedDType(dtype: CommDType, opts: ReduceOptions | undefined, where: string): CommDType {
  if (opts?.float16 && dtype !== "bfloat16") throw new TypeError(`${where}: the float16 option needs 16-bit data (a Uint16Array), got ${dtype}`);
  return opts?.float16 ? "float16" : dtype;
}

/** Tensors reduced in place together must not share memory: each element would be summed twice. */
function checkDisjoint(ts: readonly Resolved[], where: string): void {
  const byBuffer = new Map<ArrayBufferLike, { start: number; end: number; i: number }[]>();
  ts.forEach((t, i) => {
    const e = t.ref.data.BYTES_PER_ELEMENT;
    const start = t.ref.data.byteOffset + t.ref.offset * e;
    const list = byBuffer.get(t.ref.data.buffer) ?? [];
    list.push({ start, end: start + t.ref.numel * e, i });
    byBuffer.set(t.ref.data.buffer, list);
  });
  for (const list of byBuffer.values()) {
    // Sorted by start, each non-empty range must begin after the furthest end seen so far.
    const ranges = list.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start);
    let furthest = ranges[0];
    for (const b of ranges.slice(1)) {
      if (b.start < furthest!.end) {
        const [x, y] = [Math.min(furthest!.i, b.i), Math.max(furthest!.i, b.i)];
        throw new Error(`${where}: tensors[${x}] and tensors[${y}] share memory; each tensor must be reduced once`);
      }
      if (b.end > furthest!.end) furthest = b;
    }
  }
}

/** `tensor` on rank `src` is copied to every rank's `tensor`. */
export function broadcast(tensor: CommTensor, src: number, opts?: Sync<CollectiveOptions>): void;
export function broadcast(tensor: CommTensor, src: number, opts: Async<CollectiveOptions>): Work;
export function broadcast(tensor: CommTensor, src: number, opts?: CollectiveOptions): Work | void;
export function broadcast(tensor: CommTensor, src: number, opts?: CollectiveOptions): Work | void {
  const where = "broadcast";
  const group = groupOf(opts, where);
  const root = group.groupRankOf(src, where);
  const t = resolve(tensor, where, group.rank !== root);
  const req: Request = { kind: "broadcast", buf: t.ref, root };
  return group.run(req, t.dtype, runOptions(opts), `broadcast(dtype=${t.dtype}, shape=${shapeText(t.shape)}, src=${src})`, finishersOf([t]));
}

/** Rank `dst`'s tensor becomes the reduction over all ranks' tensors; other ranks' are left as they were. */
export function reduce(tensor: CommTensor, dst: number, opts?: Sync<ReduceOptions>): void;
export function reduce(tensor: CommTensor, dst: number, opts: Async<ReduceOptions>): Work;
export function reduce(tensor: CommTensor, dst: number, opts?: ReduceOptions): Work | void;
export function reduce(tensor: CommTensor, dst: number, opts?: ReduceOptions): Work | void {
  const where = "reduce";
  const group = groupOf(opts, where, REDUCE_KEYS);
  const root = group.groupRankOf(dst, where);
  const t = resolve(tensor, where, group.rank === root);
  const op = reduceOpOf(opts, t.dtype, where);
  const req: Request = { kind: "reduce", buf: t.ref, root, op };
  return group.run(req, t.dtype, runOptions(opts), `reduce(dtype=${t.dtype}, shape=${shapeText(t.shape)}, dst=${dst}, op=${op})`, finishersOf([t]));
}

/** Waits until every rank of the group has called it. */
export function barrier(opts?: Sync<CollectiveOptions>): void;
export function barrier(opts: Async<CollectiveOptions>): Work;
export function barrier(opts?: CollectiveOptions): Work | void;
export function barrier(opts?: CollectiveOptions): Work | void {
  const group = groupOf(opts, "barrier");
  return group.run({ kind: "barrier" }, "uint8", runOptions(opts), "barrier()", []);
}
