import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { promoteTypes } from "../tensor/dtype.js";
import { formatShape, normalizeDim } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to, zeros } from "./creation.js";
import { splitAround } from "./indexing.js";
import { installMethods } from "./install.js";
import { assertTensor, emptyTensor } from "./util.js";
import { narrow, notScalar, unsqueeze } from "./view.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    split(splitSizeOrSections: number | readonly number[], dim?: number): Tensor[];
    chunk(chunks: number, dim?: number): Tensor[];
  }
}

function checkList(tensors: readonly Tensor[], op: string): void {
  if (!Array.isArray(tensors) || tensors.length === 0) throw new RangeError(`${op}: expected a non-empty array of tensors`);
  tensors.forEach((t, i) => assertTensor(t, op, `tensors[${i}]`));
}

/** torch.cat: joins tensors along an existing dim; all other sizes must match. Dtypes promote. */
export function cat(tensors: readonly Tensor[], dim = 0): Tensor {
  checkList(tensors, "cat");
  const dtype = tensors.map((t) => t.dtype).reduce(promoteTypes);
  // PyTorch skips legacy empty tensors of shape [0] whatever the others' shapes (their dtype still
  // counts, and one that requires grad keeps the result in the graph with a zero gradient).
  const kept = tensors.filter((t) => !(t.ndim === 1 && t.shape[0] === 0));
  if (kept.length < tensors.length && (kept.length > 0 || !Number.isInteger(dim) || dim < -1 || dim > 0)) {
    const skipped = tensors.filter((t) => !kept.includes(t));
    const inner = kept.length > 0 ? cat(kept.map((t) => to(t, dtype)), dim) : cat(skipped.map((t) => to(t, dtype)), 0);
    if (kept.length === 0 || !skipped.some((t) => t.requiresGrad)) return inner;
    return record(inner.detach(), "CatBackward", [inner, ...skipped], (g) => [g, ...skipped.map((t) => zeros(t.shape, { dtype: t.dtype }))]);
  }
  const first = tensors[0];
  const d = normalizeDim(dim, first.ndim, "cat");
  if (first.ndim === 0) throw new RangeError("cat: zero-dimensional tensors cannot be concatenated; use stack() instead");
  tensors.forEach((t, i) => {
    if (t.ndim !== first.ndim || t.shape.some((s, j) => j !== d && s !== first.shape[j])) {
      throw new RangeError(
        `cat: tensors[${i}] has shape ${formatShape(t.shape)} but tensors[0] has ${formatShape(first.shape)}; all sizes must match except along dim ${d}`,
      );
    }
  });
  const inputs = tensors.map((t) => to(t, dtype));
  const sizes = inputs.map((t) => t.shape[d]);
  const total = sizes.reduce((a, b) => a + b, 0);
  const shape = first.shape.map((s, j) => (j === d ? total : s));
  const out = emptyTensor(dtype, shape);
  const [outer, , inner] = splitAround(shape, d);
  const backend = getBackend();
  // Each input, read with `d` moved to the front, is one contiguous run of a [total, outer, inner]
  // staging layout; one strided copy then puts `d` back. With outer = 1 the staging is the output.
  const staging = outer === 1 ? out : emptyTensor(dtype, [total, outer, inner]);
  let start = 0;
  inputs.forEach((t) => {
    const others = (values: readonly number[]) => values.filter((_, j) => j !== d);
    const front = { data: t.storage.data, offset: t.offset, strides: [t.strides[d], ...others(t.strides)] };
    backend.copy(front, [t.shape[d], ...others(t.shape)], staging.storage.data, start * outer * inner);
    start += t.shape[d];
  });
  if (staging !== out) {
    backend.copy({ data: staging.storage.data, offset: 0, strides: [inner, outer * inner, 1] }, [outer, total, inner], out.storage.data, 0);
  }
  return record(out, "CatBackward", inputs, (g) => {
    let offset = 0;
    return sizes.map((size) => {
      const part = narrow(g, d, offset, size);
      offset += size;
      return part;
    });
  });
}

/** torch.stack: joins same-shaped tensors along a new dim. */
export function stack(tensors: readonly Tensor[], dim = 0): Tensor {
  checkList(tensors, "stack");
  const first = tensors[0];
  tensors.forEach((t, i) => {
    if (t.ndim !== first.ndim || t.shape.some((s, j) => s !== first.shape[j])) {
      throw new RangeError(`stack: every tensor must have the same shape; tensors[${i}] has ${formatShape(t.shape)}, tensors[0] has ${formatShape(first.shape)}`);
    }
  });
  const d = normalizeDim(dim, first.ndim + 1, "stack");
  return cat(tensors.map((t) => unsqueeze(t, d)), d);
}

/**
 * torch.split: views of consecutive pieces along dim, each `splitSizeOrSections` long (the last
 * may be shorter), or of the listed lengths (which must add up to the dim's size).
 */
export function split(x: Tensor, splitSizeOrSections: number | readonly number[], dim = 0): Tensor[] {
  assertTensor(x, "split");
  notScalar(x, "split");
  const d = normalizeDim(dim, x.ndim, "split");
  const size = x.shape[d];
  let sections: number[];
  if (typeof splitSizeOrSections === "number") {
    const step = splitSizeOrSections;
    if (!Number.isInteger(step) || step < 0 || (step === 0 && size !== 0)) {
      throw new RangeError(`split: the split size must be a positive integer, got ${step} for dim ${d} of size ${size}`);
    }
    sections = [];
    for (let s = 0; s < size; s += step) sections.push(Math.min(step, size - s));
    if (sections.length === 0) sections.push(0);
  } else {
    sections = [...splitSizeOrSections];
    const sum = sections.reduce((a, b) => a + b, 0);
    if (sections.some((s) => !Number.isInteger(s) || s < 0) || sum !== size) {
      throw new RangeError(`split: the sections ${formatShape(sections)} must be non-negative integers adding up to ${size}, the size of dim ${d} of ${formatShape(x.shape)}`);
    }
  }
  let start = 0;
  return sections.map((length) => {
    const part = narrow(x, d, start, length);
    start += length;
    return part;
  });
}

/**
 * torch.chunk: `chunks` pieces of ceil(size / chunks) along dim; fewer when the size does not
 * allow that many (6 in 4 chunks gives 3 of 2), as PyTorch does.
 */
export function chunk(x: Tensor, chunks: number, dim = 0): Tensor[] {
  assertTensor(x, "chunk");
  notScalar(x, "chunk");
  if (!Number.isInteger(chunks) || chunks <= 0) throw new RangeError(`chunk: the number of chunks must be a positive integer, got ${chunks}`);
  const d = normalizeDim(dim, x.ndim, "chunk");
  const size = x.shape[d];
  if (size === 0) return Array.from({ length: chunks }, () => narrow(x, d, 0, 0));
  return split(x, Math.ceil(size / chunks), d);
}

installMethods({ split, chunk });
