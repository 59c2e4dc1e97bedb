import type { Work } from "./work.js";
import type { BufRef, Request } from "./engine/messages.js";
import { type Async, type CollectiveOptions, COLLECTIVE_KEYS, finishersOf, groupOf, listLength, runOptions, sameDType, type Sync } from "./options.js";
import { type CommTensor, resolve, type Resolved, shapeText } from "./tensor_ref.js";

/** Rank i's `inputList[j]` goes to rank j's `outputList[i]`. Sizes may differ between pairs. */
export function allToAll(outputList: CommTensor[], inputList: CommTensor[], opts?: Sync<CollectiveOptions>): void;
export function allToAll(outputList: CommTensor[], inputList: CommTensor[], opts: Async<CollectiveOptions>): Work;
export function allToAll(outputList: CommTensor[], inputList: CommTensor[], opts?: CollectiveOptions): Work | void;
export function allToAll(outputList: CommTensor[], inputList: CommTensor[], opts?: CollectiveOptions): Work | void {
  const where = "allToAll";
  const group = groupOf(opts, where);
  listLength(where, inputList, group.size, "inputList");
  listLength(where, outputList, group.size, "outputList");
  const inputs = inputList.map((t) => resolve(t, where, false));
  const outputs = outputList.map((t) => resolve(t, where, true));
  sameDType(where, inputs[0]!, [...inputs, ...outputs], "the tensors");
  const self = group.rank;
  if (self >= 0 && inputs[self]!.ref.numel !== outputs[self]!.ref.numel) {
    throw new Error(`${where}: inputList[${self}] (${inputs[self]!.ref.numel} elements) must fit outputList[${self}] (${outputs[self]!.ref.numel}), this rank's own block`);
  }
  const req: Request = { kind: "allToAll", inputs: inputs.map((i) => i.ref), outputs: outputs.map((o) => o.ref) };
  return group.run(req, inputs[0]!.dtype, runOptions(opts), `allToAll(dtype=${inputs[0]!.dtype})`, finishersOf(outputs));
}

export interface AllToAllSingleOptions extends CollectiveOptions {
  /** Rows (along dim 0) of `output` that come from each rank; equal blocks when left out. */
  outputSplitSizes?: number[];
  /** Rows (along dim 0) of `input` that go to each rank; equal blocks when left out. */
  inputSplitSizes?: number[];
}

/** allToAll on single tensors split along their first dimension. */
export function allToAllSingle(output: CommTensor, input: CommTensor, opts?: Sync<AllToAllSingleOptions>): void;
export function allToAllSingle(output: CommTensor, input: CommTensor, opts: Async<AllToAllSingleOptions>): Work;
export function allToAllSingle(output: CommTensor, input: CommTensor, opts?: AllToAllSingleOptions): Work | void;
export function allToAllSingle(output: CommTensor, input: CommTensor, opts?: AllToAllSingleOptions): Work | void {
  const where = "allToAllSingle";
  const group = groupOf(opts, where, [...COLLECTIVE_KEYS, "outputSplitSizes", "inputSplitSizes"]);
  const inp = resolve(input, where, false);
  const out = resolve(output, where, true);
  if (inp.dtype !== out.dtype) throw new Error(`${where}: output has dtype ${out.dtype} but input has ${inp.dtype}`);
  const inputs = splitRows(where, inp, opts?.inputSplitSizes, group.size, "input");
  const outputs = splitRows(where, out, opts?.outputSplitSizes, group.size, "output");
  const req: Request = { kind: "allToAll", inputs, outputs };
  return group.run(req, inp.dtype, runOptions(opts), `allToAllSingle(dtype=${inp.dtype})`, finishersOf([out]));
}

function splitRows(where: string, r: Resolved, splits: number[] | undefined, size: number, what: string): BufRef[] {
  const rows = r.shape.length === 0 ? 1 : r.shape[0]!;
  const rowNumel = rows === 0 ? 0 : r.ref.numel / rows;
  let sizes: number[];
  if (splits === undefined) {
    if (rows % size !== 0) {
      throw new Error(`${where}: ${what} of shape ${shapeText(r.shape)} cannot be split into ${size} equal blocks along dim 0; pass ${what}SplitSizes`);
    }
    sizes = Array.from({ length: size }, () => rows / size);
  } else {
    listLength(where, splits, size, `${what}SplitSizes`);
    if (splits.some((s) => !Number.isInteger(s) || s < 0) || splits.reduce((a, b) => a + b, 0) !== rows) {
      throw new Error(`${where}: ${what}SplitSizes [${splits.join(", ")}] must be non-negative integers summing to ${what}'s ${rows} rows`);
    }
    sizes = splits;
  }
  let offset = r.ref.offset;
  return sizes.map((s) => {
    const ref = { data: r.ref.data, offset, numel: s * rowNumel };
    offset += s * rowNumel;
    return ref;
  });
}
