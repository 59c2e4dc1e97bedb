import { noGrad } from "../autograd/grad_mode.js";
import { clone } from "../ops/creation.js";
import { Tensor } from "../tensor/tensor.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

/**
 * An independent copy of a module tree with the same values (Python's copy.deepcopy, which
 * PyTorch's TransformerEncoder uses to stack identical layers). Tensors are copied, shared
 * members stay shared within the copy, and non-tensor objects that are not plain data
 * (generators, functions) are kept by reference.
 */
export function deepCopy<M extends Module>(module: M): M {
  return noGrad(() => copyValue(module, new Map())) as M;
}

function copyValue(v: unknown, memo: Map<unknown, unknown>): unknown {
  if (v === null || typeof v !== "object") return v;
  if (memo.has(v)) return memo.get(v);
  if (v instanceof Parameter) return remember(memo, v, new Parameter(clone(v), v.requiresGrad));
  if (v instanceof Tensor) return remember(memo, v, clone(v));
  if (Array.isArray(v)) {
    const out = remember(memo, v, [] as unknown[]);
    for (const x of v) out.push(copyValue(x, memo));
    return out;
  }
  if (v instanceof Map) {
    const out = remember(memo, v, new Map());
    for (const [k, x] of v) out.set(k, copyValue(x, memo));
    return out;
  }
  if (v instanceof Set) {
    const out = remember(memo, v, new Set());
    for (const x of v) out.add(copyValue(x, memo));
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (v instanceof Module || proto === Object.prototype || proto === null) {
    const out = remember(memo, v, Object.create(proto) as object);
    for (const key of Reflect.ownKeys(v)) {
      const desc = Object.getOwnPropertyDescriptor(v, key)!;
      if ("value" in desc) desc.value = copyValue(desc.value, memo);
      Object.defineProperty(out, key, desc);
    }
    return out;
  }
  return v;
}

function remember<T>(memo: Map<unknown, unknown>, from: unknown, to: T): T {
  memo.set(from, to);
  return to;
}
