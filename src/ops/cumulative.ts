import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { DType } from "../tensor/dtype.js";
import { normalizeDim } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { to } from "./creation.js";
import { div, eq, logicalAnd, mul, where } from "./elementwise.js";
import { flip } from "./flip_roll.js";
import { splitAround } from "./indexing.js";
import { installMethods } from "./install.js";
import { sum } from "./reduction.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { expand, transpose, unsqueeze } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    cumsum(dim: number, options?: CumulativeOptions): Tensor;
    cumprod(dim: number, options?: CumulativeOptions): Tensor;
  }
}

export interface CumulativeOptions {
  /** Cast the input to this dtype first (PyTorch's dtype keyword). */
  dtype?: DType | null;
}

/** int32 and bool accumulate in int32 (PyTorch uses int64, which ringtorch does not have). */
function prepare(x: Tensor, dim: number, options: CumulativeOptions, op: string): [Tensor, number] {
  assertTensor(x, op);
  checkOptions(op, options, ["dtype"]);
  let input = options.dtype ? to(x, options.dtype) : x;
  if (input.dtype === "bool") input = to(input, "int32");
  if (input.dtype === "bfloat16") throw new TypeError(`${op}: bfloat16 tensors are storage only; pass { dtype: "float32" }`);
  return [input, normalizeDim(dim, Math.max(input.ndim, 1), op)];
}

function scan(prod: boolean, x: Tensor, d: number): Tensor {
  const src = contiguousData(x);
  const [outer, size, inner] = x.ndim === 0 ? [1, 1, 1] : splitAround(x.shape, d);
  const out = emptyTensor(x.dtype, x.shape);
  getBackend().cumulative(prod, src.storage.data, src.offset, outer, size, inner, out.storage.data);
  return out;
}

/** torch.cumsum: running sums along dim. The gradient is the reversed running sum of the gradient. */
export function cumsum(x: Tensor, dim: number, options: CumulativeOptions = {}): Tensor {
  if (hasBFloat16(x, dim, options) && (options.dtype === undefined || options.dtype === null)) return inFloat32(cumsum, [x, dim, options]);
  const [input, d] = prepare(x, dim, options, "cumsum");
  const out = scan(false, input, d);
  return record(out, "CumsumBackward", [input], (g) => [input.ndim === 0 ? g : flip(cumsum(flip(g, [d]), d), [d])]);
}

/**
 * torch.cumprod: running products along dim. Without zeros the gradient is the reversed running
 * sum of g·y divided by x; where x holds a zero, each input's gradient is Σ_{j≥i} g_j·Π_{k≤j, k≠i} x_k,
 * computed exactly from an [n, n] expansion (O(n²) memory along dim, only in that case).
 */
export function cumprod(x: Tensor, dim: number, options: CumulativeOptions = {}): Tensor {
  if (hasBFloat16(x, dim, options) && (options.dtype === undefined || options.dtype === null)) return inFloat32(cumprod, [x, dim, options]);
  const [input, d] = prepare(x, dim, options, "cumprod");
  const out = scan(true, input, d);
  return record(out, "CumprodBackward", [input], (g) => [cumprodGrad(input, out, g, d)], [input]);
}

function hasZero(x: Tensor): boolean {
  const c = contiguousData(x);
  const data = c.storage.data;
  for (let i = 0; i < x.numel; i++) if (data[c.offset + i] === 0) return true;
  return false;
}

const reversedCumsum = (t: Tensor, d: number) => flip(cumsum(flip(t, [d]), d), [d]);

function cumprodGrad(x: Tensor, y: Tensor, g: Tensor, d: number): Tensor {
  if (x.ndim === 0 || x.shape[d] === 1) return g;
  if (!hasZero(x)) return div(reversedCumsum(mul(g, y), d), x);
  if (!isGradEnabled()) return cumprodGradFirstOrder(x, y, g, d);
  // Move dim last: xt [..., n]; rows[..., i, j] = x_j with x_i replaced by 1.
  const last = x.ndim - 1;
  const xt = transpose(x, d, last);
  const gt = transpose(g, d, last);
  const n = x.shape[d];
  const lead = xt.shape.slice(0, -1);
  const rows = where(squareMask(n, (i, j) => i === j), 1, expand(unsqueeze(xt, -2), [...lead, n, n]));
  // prods[..., i, j] = Π_{k≤j, k≠i} x_k; only j ≥ i contributes to x_i's gradient.
  const prods = cumprod(rows, -1);
  const upper = to(squareMask(n, (i, j) => j >= i), x.dtype);
  const gi = sum(mul(mul(prods, upper), unsqueeze(gt, -2)), -1);
  return transpose(gi, d, last);
}

/**
 * PyTorch's O(n) first-order gradient with zeros (its cumprod_backward outside grad mode): before
 * the first zero of a slice the division formula, at the first zero the product of the other
 * factors up to each later output, after it exactly 0 (even next to ±inf or NaN, where the
 * O(n²) form would give 0·inf = NaN).
 */
function cumprodGradFirstOrder(x: Tensor, y: Tensor, g: Tensor, d: number): Tensor {
  const zeros = cumsum(eq(x, 0), d);
  const before = eq(zeros, 0);
  const first = logicalAnd(eq(zeros, 1), eq(x, 0));
  const head = where(before, div(reversedCumsum(where(before, mul(g, y), 0), d), where(before, x, 1)), 0);
  const atFirst = reversedCumsum(mul(where(eq(zeros, 1), g, 0), cumprod(where(first, 1, x), d)), d);
  return where(first, atFirst, head);
}

/** An [n, n] bool tensor, true where test(row, col). */
function squareMask(n: number, test: (i: number, j: number) => boolean): Tensor {
  const m = emptyTensor("bool", [n, n]);
  const data = m.storage.data;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) data[i * n + j] = test(i, j) ? 1 : 0;
  return m;
}

installMethods({ cumsum, cumprod });
