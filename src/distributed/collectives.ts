import type { Work } from "./work.js";
import type { Request } from "./engine/messages.js";
import {
  type Async,
  type CollectiveOptions,
  finishersOf,
  groupOf,
  reduceOpOf,
  type ReduceOptions,
  runOptions,
  type Sync,
} from "./options.js";
import { type CommTensor, resolve, shapeText } from "./tensor_ref.js";

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
  const group = groupOf(opts, where);
  const t = resolve(tensor, where, true);
  if (opts?.float16 && t.dtype !== "bfloat16") throw new TypeError(`${where}: the float16 option needs 16-bit data (a Uint16Array), got ${t.dtype}`);
  const dtype = opts?.float16 ? "float16" : t.dtype;
  const op = reduceOpOf(opts, dtype, where);
  const req: Request = { kind: "allReduce", buf: t.ref, op, lowPrecision: opts?.lowPrecision === true };
  return group.run(req, dtype, runOptions(opts), `allReduce(dtype=${dtype}, shape=${shapeText(t.shape)}, op=${op})`, finishersOf([t]));
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
  const group = groupOf(opts, where);
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
