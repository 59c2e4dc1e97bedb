import { formatShape, normalizeDim } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { indexSelect } from "./indexing.js";
import { installMethods } from "./install.js";
import { assertTensor } from "./util.js";
import { reshape } from "./view.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    flip(dims: number | readonly number[]): Tensor;
    roll(shifts: number | readonly number[], dims?: number | readonly number[] | null): Tensor;
  }
}

function dimList(dims: number | readonly number[], ndim: number, op: string, unique = true): number[] {
  const list = typeof dims === "number" ? [dims] : [...dims];
  const out = list.map((d) => {
    if (!Number.isInteger(d)) throw new TypeError(`${op}: dims must be integers, got ${JSON.stringify(dims)}`);
    return normalizeDim(d, Math.max(ndim, 1), op);
  });
  if (unique && new Set(out).size !== out.length) throw new RangeError(`${op}: dim ${formatShape(list)} appears more than once`);
  return out;
}

/** Selects along d with index[j] = source(j): differentiable through indexSelect's backward. */
function remap(x: Tensor, d: number, source: (j: number, size: number) => number): Tensor {
  const size = x.shape[d];
  const index = new Int32Array(size);
  for (let j = 0; j < size; j++) index[j] = source(j, size);
  return indexSelect(x, d, index);
}

/** torch.flip: reverses the order of elements along each of dims (a copy, as in PyTorch). */
export function flip(x: Tensor, dims: number | readonly number[]): Tensor {
  assertTensor(x, "flip");
  if (dims === undefined) throw new TypeError("flip: dims is required, e.g. flip(x, [0])");
  const list = dimList(dims, x.ndim, "flip");
  if (x.ndim === 0) return x.clone();
  return list.reduce((t, d) => remap(t, d, (j, size) => size - 1 - j), x);
}

/**
 * torch.roll: shifts elements along dims, wrapping around; without dims the tensor is rolled as
 * if flattened, then restored to its shape. One shift per dim.
 */
export function roll(x: Tensor, shifts: number | readonly number[], dims: number | readonly number[] | null = null): Tensor {
  assertTensor(x, "roll");
  const shiftList = typeof shifts === "number" ? [shifts] : [...shifts];
  if (shiftList.length === 0 || shiftList.some((s) => !Number.isInteger(s))) {
    throw new TypeError(`roll: shifts must be one or more integers, got ${JSON.stringify(shifts)}`);
  }
  if (dims === null || dims === undefined) {
    if (shiftList.length !== 1) throw new RangeError(`roll: without dims, shifts must be a single number, got ${JSON.stringify(shifts)}`);
    if (x.numel === 0) return x.clone();
    return reshape(roll(reshape(x, [x.numel]), shiftList, [0]), x.shape);
  }
  const dimsList = dimList(dims, x.ndim, "roll", false);
  if (dimsList.length !== shiftList.length) {
    throw new RangeError(`roll: shifts and dims must have the same length, got ${shiftList.length} shifts and ${dimsList.length} dims`);
  }
  if (x.ndim === 0) return x.clone();
  return dimsList.reduce((t, d, i) => {
    if (t.shape[d] === 0) return t;
    return remap(t, d, (j, size) => (((j - shiftList[i]) % size) + size) % size);
  }, x);
}

installMethods({ flip, roll });
