import type { Tensor } from "../tensor/tensor.js";
import { allocate, type CommDType, dtypeOfArray, type TypedArray } from "./dtypes.js";
import type { BufRef } from "./engine/messages.js";

/** What collectives accept: a contiguous tensor, or a typed array (bfloat16 as Uint16Array). */
export type CommTensor = Tensor | TypedArray;

export interface Resolved {
  ref: BufRef;
  dtype: CommDType;
  shape: readonly number[];
  /** Copies results back when the caller's memory is not shared with the worker (plain typed arrays). */
  finish: (() => void) | null;
}

/**
 * The memory behind a tensor argument. Tensors' storage is already a SharedArrayBuffer the comm
 * worker can use in place; a typed array over an ordinary ArrayBuffer is staged through a shared
 * copy (and copied back when the operation writes it).
 */
export function resolve(t: CommTensor, where: string, writes: boolean): Resolved {
  if (ArrayBuffer.isView(t)) {
    const data = t as TypedArray;
    const dtype = dtypeOfArray(data);
    const shape = [data.length];
    if (data.buffer instanceof SharedArrayBuffer) return { ref: { data, offset: 0, numel: data.length }, dtype, shape, finish: null };
    const staged = allocate(dtype, data.length, true);
    staged.set(data as never);
    const finish = writes ? () => data.set(staged as never) : null;
    return { ref: { data: staged, offset: 0, numel: data.length }, dtype, shape, finish };
  }
  const tensor = t as Tensor;
  if (typeof t === "function") {
    // PyTorch's `p.grad.data` is an attribute; here `.data` is a method, so the porter's line passes the function itself.
    throw new TypeError(`${where}: expected a Tensor or a typed array, got a function (${(t as { name?: string }).name || "anonymous"}); if you wrote \`x.data\` as in PyTorch, call .data() or pass the tensor itself (collectives work in place on tensors)`);
  }
  if (!tensor || typeof tensor !== "object" || !("storage" in tensor)) {
    throw new TypeError(`${where}: expected a Tensor or a typed array, got ${describe(t)}`);
  }
  if (!tensor.isContiguous()) {
    throw new Error(`${where}: tensors must be contiguous, got one of shape [${tensor.shape.join(", ")}] with strides [${tensor.strides.join(", ")}]; call .contiguous() first`);
  }
  const dtype: CommDType = tensor.dtype === "bool" ? "uint8" : tensor.dtype;
  const data = tensor.storage.data;
  if (writes) tensor.storage.version++;
  if (data.buffer instanceof SharedArrayBuffer) {
    return { ref: { data, offset: tensor.offset, numel: tensor.numel }, dtype, shape: tensor.shape, finish: null };
  }
  const staged = allocate(dtype, tensor.numel, true);
  staged.set(data.subarray(tensor.offset, tensor.offset + tensor.numel) as never);
  const finish = writes ? () => data.set(staged as never, tensor.offset) : null;
  return { ref: { data: staged, offset: 0, numel: tensor.numel }, dtype, shape: tensor.shape, finish };
}

export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return (v as object).constructor?.name ?? "an object";
  return typeof v;
}

export function shapeText(shape: readonly number[]): string {
  return `[${shape.join(", ")}]`;
}
