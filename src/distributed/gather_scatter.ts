import type { Work } from "./work.js";
import type { Request } from "./engine/messages.js";
import {
  type Async,
  type CollectiveOptions,
  finishersOf,
  groupOf,
  listLength,
  reduceOpOf,
  type ReduceOptions,
  runOptions,
  sameDType,
  sameNumel,
  type Sync,
  REDUCE_KEYS,
} from "./options.js";
import { type CommTensor, resolve, type Resolved, shapeText } from "./tensor_ref.js";

/** `tensorList[i]` on every rank receives rank i's `tensor`. */
export function allGather(tensorList: CommTensor[], tensor: CommTensor, opts?: Sync<CollectiveOptions>): void;
export function allGather(tensorList: CommTensor[], tensor: CommTensor, opts: Async<CollectiveOptions>): Work;
export function allGather(tensorList: CommTensor[], tensor: CommTensor, opts?: CollectiveOptions): Work | void;
export function allGather(tensorList: CommTensor[], tensor: CommTensor, opts?: CollectiveOptions): Work | void {
  const where = "allGather";
  const group = groupOf(opts, where);
  const input = resolve(tensor, where, false);
  listLength(where, tensorList, group.size, "tensorList");
  const outputs = tensorList.map((t) => resolve(t, where, true));
  sameDType(where, input, outputs, "tensorList");
  sameNumel(where, input.ref.numel, outputs, "tensorList", input.shape);
  const req: Request = { kind: "allGather", input: input.ref, outputs: outputs.map((o) => o.ref) };
  return group.run(req, input.dtype, runOptions(opts), `allGather(dtype=${input.dtype}, shape=${shapeText(input.shape)})`, finishersOf(outputs));
}

/** `output` (group size × input's elements) holds every rank's `input`, in rank order. */
export function allGatherIntoTensor(output: CommTensor, input: CommTensor, opts?: Sync<CollectiveOptions>): void;
export function allGatherIntoTensor(output: CommTensor, input: CommTensor, opts: Async<CollectiveOptions>): Work;
export function allGatherIntoTensor(output: CommTensor, input: CommTensor, opts?: CollectiveOptions): Work | void;
export function allGatherIntoTensor(output: CommTensor, input: CommTensor, opts?: CollectiveOptions): Work | void {
  const where = "allGatherIntoTensor";
  const group = groupOf(opts, where);
  const inp = resolve(input, where, false);
  const out = resolve(output, where, true);
  checkConcatenated(where, out, inp, group.size, "output", "input");
  const req: Request = { kind: "allGather", input: inp.ref, outputs: sliceRef(out, group.size) };
  return group.run(req, inp.dtype, runOptions(opts), `allGatherIntoTensor(dtype=${inp.dtype}, shape=${shapeText(inp.shape)})`, finishersOf([out]));
}

/** `output` on rank i becomes the reduction over ranks of their `inputList[i]`. */
export function reduceScatter(output: CommTensor, inputList: CommTensor[], opts?: Sync<ReduceOptions>): void;
export function reduceScatter(output: CommTensor, inputList: CommTensor[], opts: Async<ReduceOptions>): Work;
export function reduceScatter(output: CommTensor, inputList: CommTensor[], opts?: ReduceOptions): Work | void;
export function reduceScatter(output: CommTensor, inputList: CommTensor[], opts?: ReduceOptions): Work | void {
  const where = "reduceScatter";
  const group = groupOf(opts, where, REDUCE_KEYS);
  const out = resolve(output, where, true);
  const op = reduceOpOf(opts, out.dtype, where);
  listLength(where, inputList, group.size, "inputList");
  const inputs = inputList.map((t) => resolve(t, where, false));
  sameDType(where, out, inputs, "inputList");
  sameNumel(where, out.ref.numel, inputs, "inputList", out.shape);
  const req: Request = { kind: "reduceScatter", inputs: inputs.map((i) => i.ref), output: out.ref, op };
  return group.run(req, out.dtype, runOptions(opts), `reduceScatter(dtype=${out.dtype}, shape=${shapeText(out.shape)}, op=${op})`, finishersOf([out]));
}

/** Rank i's `output` becomes the reduction of block i of every rank's `input` (group size × output's elements). */
export function reduceScatterTensor(output: CommTensor, input: CommTensor, opts?: Sync<ReduceOptions>): void;
export function reduceScatterTensor(output: CommTensor, input: CommTensor, opts: Async<ReduceOptions>): Work;
export function reduceScatterTensor(output: CommTensor, input: CommTensor, opts?: ReduceOptions): Work | void;
export function reduceScatterTensor(output: CommTensor, input: CommTensor, opts?: ReduceOptions): Work | void {
  const where = "reduceScatterTensor";
  const group = groupOf(opts, where, REDUCE_KEYS);
  const out = resolve(output, where, true);
  const inp = resolve(input, where, false);
  const op = reduceOpOf(opts, out.dtype, where);
  checkConcatenated(where, inp, out, group.size, "input", "output");
  const req: Request = { kind: "reduceScatter", inputs: sliceRef(inp, group.size), output: out.ref, op };
  return group.run(req, out.dtype, runOptions(opts), `reduceScatterTensor(dtype=${out.dtype}, shape=${shapeText(out.shape)}, op=${op})`, finishersOf([out]));
}

/** Rank `src` sends `scatterList[i]` to rank i's `tensor`; other ranks pass no list. */
export function scatter(tensor: CommTensor, scatterList: CommTensor[] | null | undefined, src: number, opts?: Sync<CollectiveOptions>): void;
export function scatter(tensor: CommTensor, scatterList: CommTensor[] | null | undefined, src: number, opts: Async<CollectiveOptions>): Work;
export function scatter(tensor: CommTensor, scatterList: CommTensor[] | null | undefined, src: number, opts?: CollectiveOptions): Work | void;
export function scatter(tensor: CommTensor, scatterList: CommTensor[] | null | undefined, src: number, opts?: CollectiveOptions): Work | void {
  const where = "scatter";
  const group = groupOf(opts, where);
  const root = group.groupRankOf(src, where);
  const out = resolve(tensor, where, true);
  const inputs = rootList(where, scatterList, group.rank === root, group.size, "scatterList", src, out, false);
  const req: Request = { kind: "scatter", inputs: inputs?.map((i) => i.ref) ?? null, output: out.ref, root };
  return group.run(req, out.dtype, runOptions(opts), `scatter(dtype=${out.dtype}, shape=${shapeText(out.shape)}, src=${src})`, finishersOf([out]));
}

/** Rank `dst`'s `gatherList[i]` receives rank i's `tensor`; other ranks pass no list. */
export function gather(tensor: CommTensor, gatherList: CommTensor[] | null | undefined, dst: number, opts?: Sync<CollectiveOptions>): void;
export function gather(tensor: CommTensor, gatherList: CommTensor[] | null | undefined, dst: number, opts: Async<CollectiveOptions>): Work;
export function gather(tensor: CommTensor, gatherList: CommTensor[] | null | undefined, dst: number, opts?: CollectiveOptions): Work | void;
export function gather(tensor: CommTensor, gatherList: CommTensor[] | null | undefined, dst: number, opts?: CollectiveOptions): Work | void {
  const where = "gather";
  const group = groupOf(opts, where);
  const root = group.groupRankOf(dst, where);
  const inp = resolve(tensor, where, false);
  const outputs = rootList(where, gatherList, group.rank === root, group.size, "gatherList", dst, inp, true);
  const req: Request = { kind: "gather", input: inp.ref, outputs: outputs?.map((o) => o.ref) ?? null, root };
  return group.run(req, inp.dtype, runOptions(opts), `gather(dtype=${inp.dtype}, shape=${shapeText(inp.shape)}, dst=${dst})`, finishersOf(outputs ?? []));
}

function rootList(
  where: string,
  list: CommTensor[] | null | undefined,
  isRoot: boolean,
  size: number,
  what: string,
  root: number,
  like: Resolved,
  writes: boolean,
): Resolved[] | null {
  if (!isRoot) {
    if (list && list.length > 0) throw new Error(`${where}: only the root (rank ${root}) passes a ${what}; this rank passed ${list.length} tensors`);
    return null;
  }
  listLength(where, list, size, what);
  const resolved = list!.map((t) => resolve(t, where, writes));
  sameDType(where, like, resolved, what);
  sameNumel(where, like.ref.numel, resolved, what, like.shape);
  return resolved;
}

function checkConcatenated(where: string, big: Resolved, small: Resolved, size: number, bigName: string, smallName: string): void {
  if (big.dtype !== small.dtype) throw new Error(`${where}: ${bigName} has dtype ${big.dtype} but ${smallName} has ${small.dtype}`);
  if (big.ref.numel !== size * small.ref.numel) {
    throw new Error(
      `${where}: ${bigName} must hold group size (${size}) × ${small.ref.numel} = ${size * small.ref.numel} elements ` +
        `(${smallName} has shape ${shapeText(small.shape)}), but it has shape ${shapeText(big.shape)} (${big.ref.numel})`,
    );
  }
}

function sliceRef(r: Resolved, parts: number) {
  const n = r.ref.numel / parts;
  return Array.from({ length: parts }, (_, i) => ({ data: r.ref.data, offset: r.ref.offset + i * n, numel: n }));
}
