import type { Tensor } from "../tensor/tensor.js";
import { clone, to, zeros } from "./creation.js";
import { abs, eq, lt, ne, where } from "./elementwise.js";
import { installMethods } from "./install.js";
import { assertTensor } from "./util.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    isnan(): Tensor;
    isinf(): Tensor;
    isfinite(): Tensor;
    nanToNum(nan?: number, posinf?: number | null, neginf?: number | null): Tensor;
  }
}

const FLOAT32_MAX = 3.4028234663852886e38;
const BFLOAT16_MAX = 3.3895313892515355e38;

function floating(x: Tensor): boolean {
  return x.dtype === "float32" || x.dtype === "float64" || x.dtype === "bfloat16";
}

/** The values to test, detached; bfloat16 is storage only, so it is read as float32. */
function values(x: Tensor): Tensor {
  return x.dtype === "bfloat16" ? to(x.detach(), "float32") : x.detach();
}

/** torch.isnan: a bool tensor, true where x is NaN (never for integer or bool tensors). */
export function isnan(x: Tensor): Tensor {
  assertTensor(x, "isnan");
  return floating(x) ? ne(values(x), values(x)) : zeros(x.shape, { dtype: "bool" });
}

/** torch.isinf: true where x is +∞ or −∞. */
export function isinf(x: Tensor): Tensor {
  assertTensor(x, "isinf");
  return floating(x) ? eq(abs(values(x)), Infinity) : zeros(x.shape, { dtype: "bool" });
}

/** torch.isfinite: true where x is neither NaN nor ±∞ (always for integer and bool tensors). */
export function isfinite(x: Tensor): Tensor {
  assertTensor(x, "isfinite");
  // NaN < ∞ and ∞ < ∞ are both false.
  return floating(x) ? lt(abs(values(x)), Infinity) : eq(zeros(x.shape, { dtype: "bool" }), 0);
}

function checkReplacement(v: unknown, what: string): void {
  if (v !== null && v !== undefined && typeof v !== "number") throw new TypeError(`nanToNum: ${what} must be a number, got ${typeof v}`);
}

/**
 * torch.nan_to_num: NaN becomes `nan` (0), +∞ `posinf` and −∞ `neginf` (by default the largest and
 * smallest finite values of the dtype). The gradient flows only where x was finite, as in PyTorch.
 * Integer and bool tensors come back as a copy.
 */
export function nanToNum(x: Tensor, nan = 0, posinf: number | null = null, neginf: number | null = null): Tensor {
  assertTensor(x, "nanToNum");
  checkReplacement(nan, "nan");
  checkReplacement(posinf, "posinf");
  checkReplacement(neginf, "neginf");
  if (!floating(x)) return clone(x);
  if (x.dtype === "bfloat16") return to(nanToNum(to(x, "float32"), nan, posinf ?? BFLOAT16_MAX, neginf ?? -BFLOAT16_MAX), "bfloat16");
  const big = x.dtype === "float64" ? Number.MAX_VALUE : FLOAT32_MAX;
  const d = x.detach();
  let out = where(eq(d, Infinity), posinf ?? big, x);
  out = where(eq(d, -Infinity), neginf ?? -big, out);
  return where(ne(d, d), nan, out);
}

installMethods({ isnan, isinf, isfinite, nanToNum });
