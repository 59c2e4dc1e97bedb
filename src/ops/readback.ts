import type { TypedArray } from "../tensor/dtype.js";
import { formatValues, nest } from "../tensor/format.js";
import { formatShape } from "../tensor/shape.js";
import { Tensor, denseData, type NestedArray } from "../tensor/tensor.js";
import { contiguousData } from "./util.js";

/** The values as a float64 array (bfloat16 widened, bool as 0/1), in row-major order. */
function valuesOf(t: Tensor): TypedArray {
  const c = contiguousData(t, t.dtype === "bfloat16" ? "float32" : t.dtype);
  return denseData(c);
}

/** Nested arrays of numbers (bool as 0/1), like torch's tolist(). */
export function toArray(t: Tensor): NestedArray {
  return nest(valuesOf(t), t.shape);
}

/** The single value of a one-element tensor. */
export function item(t: Tensor): number {
  if (t.numel !== 1) throw new RangeError(`item: only a tensor with one element can be converted to a number, got shape ${formatShape(t.shape)}`);
  return valuesOf(t)[0];
}

/**
 * The elements as a typed array in row-major order: the tensor's own memory when it is
 * contiguous (writes show through), else a copy.
 */
export function data(t: Tensor): TypedArray {
  const c = contiguousData(t);
  c.storage.expose();
  return denseData(c);
}

export function toString(t: Tensor): string {
  const integral = t.dtype === "int32" || t.dtype === "bool";
  const extras: string[] = [];
  if (t.dtype !== "float32") extras.push(`dtype=${t.dtype}`);
  if (t.gradFn) extras.push(`gradFn=<${t.gradFn.name}>`);
  else if (t.requiresGrad) extras.push("requiresGrad=true");
  if (t.numel === 0) extras.unshift(`size=${formatShape(t.shape)}`);
  const body = t.numel === 0 ? "[]" : formatValues(valuesOf(t), t.shape, integral);
  return `tensor(${body}${extras.length ? ", " + extras.join(", ") : ""})`;
}
