import { noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { DType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { extremeOver } from "./amax.js";
import { to, zerosLike } from "./creation.js";
import { abs, div, eq, mul, ne, pow, sign, sqrt, where } from "./elementwise.js";
import { installMethods } from "./install.js";
import { reducedShape, reductionDims, sum, type Dims } from "./reduction.js";
import { assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    norm(p?: number | "fro" | null, dim?: Dims, keepdim?: boolean, options?: VectorNormOptions): Tensor;
  }
}

export interface VectorNormOptions {
  /** Cast the input to this float dtype before computing (PyTorch's dtype keyword). */
  dtype?: DType | null;
}

function checkOrd(ord: unknown, op: string): number {
  if (typeof ord !== "number" || Number.isNaN(ord)) {
    throw new TypeError(`${op}: ord must be a number (2, 1, Infinity, -Infinity, 0 or any other p), got ${JSON.stringify(ord)}`);
  }
  return ord;
}

/** The norm's value over `dims` (kept as size 1), computed without recording. */
function normValue(x: Tensor, ord: number, dims: readonly number[], op: string): Tensor {
  if (ord < 0 && ord !== -Infinity && x.numel === 0 && (dims.length === 0 || dims.some((d) => x.shape[d] === 0))) {
    throw new RangeError(`${op}: the ${ord} norm of an empty tensor is undefined (a negative order has no identity)`);
  }
  return noGrad(() => {
    // Reducing single elements, PyTorch returns |x| without the power and root (so a float32 1e30
    // stays 1e30 where squaring it would overflow).
    if (ord !== 0 && dims.every((d) => x.shape[d] === 1)) return abs(x);
    const a = abs(x);
    if (ord === Infinity || ord === -Infinity) {
      if (x.numel === 0 && (dims.length === 0 || dims.some((d) => x.shape[d] === 0))) throw new RangeError(`${op}: the ${ord > 0 ? "" : "-"}inf norm of an empty tensor is undefined (it reduces with max/min)`);
      return extremeOver(ord > 0 ? "max" : "min", a, dims, op);
    }
    if (ord === 0) return sum(to(ne(x, 0), x.dtype), dims, true);
    if (ord === 1) return sum(a, dims, true);
    if (ord === 2) return sqrt(sum(mul(a, a), dims, true));
    return pow(sum(pow(a, ord), dims, true), 1 / ord);
  });
}

/**
 * The gradient of the norm (kept shape) with respect to x, written with public ops so double
 * backward works. PyTorch's linalg_vector_norm_backward: zero for ord 0, sgn(x) for 1, x/‖x‖ for 2
 * (0 where the norm is 0), shared evenly among the extreme elements for ±∞, and
 * sgn(x)·|x|^(p−1)·‖x‖^(1−p) otherwise.
 */
function normGrad(x: Tensor, norm: Tensor, g: Tensor, ord: number, dims: readonly number[]): Tensor {
  if (ord === 0) return zerosLike(x);
  if (ord === 1) return mul(sign(x), g);
  // g·(x/‖x‖) in PyTorch's order: x/‖x‖ stays near 1 where ‖x‖ is tiny, so the double backward
  // (through div's −up·(a/b)/b) does not overflow where x·(g/‖x‖) would.
  if (ord === 2) return mul(g, where(eq(norm, 0), 0, div(x, norm)));
  if (ord === Infinity || ord === -Infinity) {
    // Elements other than the extreme ones get exactly 0 (a NaN norm hits none: all zero, as in PyTorch).
    const hits = eq(abs(x), norm);
    return where(hits, mul(sign(x), div(g, sum(to(hits, x.dtype), dims, true))), 0);
  }
  const a = abs(x);
  // |x|^(p-1) at x = 0 is 0 for p > 1 and infinite for p < 1; PyTorch masks the latter to 0.
  const scaled = mul(sign(x), ord < 1 ? where(eq(x, 0), 0, pow(a, ord - 1)) : pow(a, ord - 1));
  const gradOverNorm = ord < 1 ? mul(g, pow(norm, 1 - ord)) : where(eq(norm, 0), 0, div(g, pow(norm, ord - 1)));
  return mul(scaled, gradOverNorm);
}

/**
 * torch.linalg.vector_norm: ‖x‖_ord over dims (all when omitted), ord any number including
 * ±Infinity and 0 (the count of non-zeros). Float input only, as in PyTorch.
 */
export function vectorNorm(x: Tensor, ord: number = 2, dim: Dims = null, keepdim = false, options: VectorNormOptions = {}): Tensor {
  if (hasBFloat16(x, ord, dim, keepdim, options) && (options.dtype === undefined || options.dtype === null)) return inFloat32(vectorNorm, [x, ord, dim, keepdim, options]);
  const op = "vectorNorm";
  assertTensor(x, op);
  checkOptions(op, options, ["dtype"]);
  const p = checkOrd(ord, op);
  const input = options.dtype ? to(x, options.dtype) : x;
  if (input.dtype !== "float32" && input.dtype !== "float64") {
    throw new TypeError(`${op}: expected a float32 or float64 tensor, got ${input.dtype} with shape [${input.shape.join(", ")}]; pass { dtype: "float32" } or convert first`);
  }
  const dims = reductionDims(Array.isArray(dim) && dim.length === 0 ? null : dim, input.ndim, op);
  const kept = normValue(input, p, dims, op);
  const out = reshape(kept, reducedShape(input.shape, dims, keepdim)).detach();
  // The recorded output (not the detached value) enters the formula, so double backward sees its dependence on x.
  return record(out, "LinalgVectorNormBackward", [input], (g) => [normGrad(input, reshape(out, kept.shape), reshape(g, kept.shape), p, dims)], [input]);
}

/**
 * torch.norm (and Tensor.norm): p "fro" (the default) or a number; over dims, or the whole
 * tensor. Every supported form is a vector norm over the given dims ("fro" is the 2-norm).
 * Matrix norms ("nuc", or a numeric p over two dims meaning an operator norm in linalg.norm) are
 * not here: torch.norm itself treats a numeric p over two dims as a vector norm, and so does this.
 */
export function norm(x: Tensor, p: number | "fro" | null = "fro", dim: Dims = null, keepdim = false, options: VectorNormOptions = {}): Tensor {
  if (hasBFloat16(x, p, dim, keepdim, options) && (options.dtype === undefined || options.dtype === null)) return inFloat32(norm, [x, p, dim, keepdim, options]);
  assertTensor(x, "norm");
  if ((p === "fro" || p === null) && Array.isArray(dim) && dim.length > 2) {
    // torch.norm hands "fro" over more than two dims to matrix_norm, which refuses them.
    throw new RangeError(`norm: the "fro" norm takes at most 2 dims, got [${dim.join(", ")}]; use linalg.vectorNorm(x, 2, dims)`);
  }
  if (p === "fro" || p === null) return vectorNorm(x, 2, dim, keepdim, options);
  if (typeof p === "string") throw new TypeError(`norm: p must be "fro" or a number, got ${JSON.stringify(p)} (the nuclear norm is not supported)`);
  return vectorNorm(x, p, dim, keepdim, options);
}

installMethods({ norm });
