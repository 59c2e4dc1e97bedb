/**
 * bfloat16 compute. ringtorch stores bfloat16 (backends only convert it); ops compute on it the way
 * PyTorch's CPU kernels do: widen to float32, compute (reductions accumulate in float32), and round
 * each result to bfloat16 once. The widening and the rounding are `to()` casts, so autograd runs
 * through them and a bfloat16 leaf gets a bfloat16 gradient.
 */
import { Tensor } from "../tensor/tensor.js";
import { resultType } from "../tensor/dtype.js";
import { to } from "./creation.js";
import { isAutocastEnabled } from "./autocast.js";

/** True when any argument (or an element of an array argument, or a value of an options object) is a bfloat16 tensor. */
export function hasBFloat16(...args: unknown[]): boolean {
  return args.some((a) => {
    if (a instanceof Tensor) return a.dtype === "bfloat16";
    if (Array.isArray(a)) return a.some((v) => v instanceof Tensor && v.dtype === "bfloat16");
    if (a && typeof a === "object") return Object.values(a).some((v) => v instanceof Tensor && v.dtype === "bfloat16");
    return false;
  });
}

/**
 * hasBFloat16 for the ops autocast also decides (products, softmax, layer norm, cross entropy):
 * inside an autocast region its own casts apply (bfloat16 GEMM, float32 results), so the plain
 * widen-and-round-back rule holds only outside one.
 */
export function hasBFloat16OutsideAutocast(...args: unknown[]): boolean {
  return !isAutocastEnabled() && hasBFloat16(...args);
}

function tensorsIn(args: readonly unknown[]): Tensor[] {
  const out: Tensor[] = [];
  for (const a of args) {
    if (a instanceof Tensor) out.push(a);
    else if (Array.isArray(a)) out.push(...a.filter((v): v is Tensor => v instanceof Tensor));
    else if (a && typeof a === "object") out.push(...Object.values(a).filter((v): v is Tensor => v instanceof Tensor));
  }
  return out;
}

function widen(a: unknown): unknown {
  const up = (v: unknown) => (v instanceof Tensor && v.dtype === "bfloat16" ? to(v, "float32") : v);
  if (a instanceof Tensor) return up(a);
  if (Array.isArray(a)) return a.map(up);
  if (a && typeof a === "object" && Object.getPrototypeOf(a) === Object.prototype) {
    return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, up(v)]));
  }
  return a;
}

function narrow(r: unknown): unknown {
  if (r instanceof Tensor) return r.dtype === "float32" ? to(r, "bfloat16") : r;
  if (Array.isArray(r)) return r.map(narrow);
  if (r && typeof r === "object" && Object.getPrototypeOf(r) === Object.prototype) {
    return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, narrow(v)]));
  }
  return r;
}

/**
 * Calls `fn` with every bfloat16 tensor argument widened to float32 and, when the tensors' result
 * type is bfloat16 (no float32/float64 tensor decides it), rounds the float32 results back.
 */
export function inFloat32<R>(fn: (...args: any[]) => R, args: readonly unknown[]): R {
  const tensors = tensorsIn(args);
  const back = tensors.length > 0 && resultType(tensors) === "bfloat16";
  const r = fn(...args.map(widen));
  return (back ? narrow(r) : r) as R;
}
