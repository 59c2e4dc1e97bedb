import { checkArity, checkOptions } from "../util/options.js";
import type { DType } from "../tensor/dtype.js";
import { to } from "./creation.js";
import type { Tensor } from "../tensor/tensor.js";
import { runThenRestore } from "../util/scoped.js";

export interface AutocastOptions {
  /** false runs fn with autocast off (nested inside an enabled region, it turns it off there). Default true. */
  enabled?: boolean;
}

let active = false;

/**
 * Runs fn with automatic mixed precision (torch.autocast on the CPU, dtype bfloat16). Inside,
 * matmul, mm, bmm, linear and the products of attention take float32 (or bfloat16) operands,
 * round them to bfloat16 and accumulate in float32, on vdpbf16ps where the CPU has AVX512_BF16.
 * Everything else (softmax, norms, reductions, losses, elementwise) runs in float32 as it would
 * outside. Autograd goes through: the backward products run in bfloat16 too, and each gradient
 * comes back in its input's dtype.
 *
 * Unlike PyTorch, whose autocast products return bfloat16, these return the float32 sums: nothing
 * downstream then computes in bfloat16, and the activations skip one rounding.
 *
 * An async fn keeps autocast on until its promise settles; as with noGrad, do not interleave it
 * with work that expects autocast off.
 */
export function autocast<T>(dtype: DType | "float16", fn: () => T): T;
export function autocast<T>(dtype: DType | "float16", options: AutocastOptions, fn: () => T): T;
export function autocast<T>(dtype: DType | "float16", optionsOrFn: AutocastOptions | (() => T), maybeFn?: () => T): T {
  const usage = 'autocast("bfloat16", () => model.call(x)) or autocast("bfloat16", { enabled }, fn)';
  checkArity("autocast", arguments, 3, usage);
  const fn = typeof optionsOrFn === "function" ? optionsOrFn : maybeFn;
  const options = typeof optionsOrFn === "function" ? undefined : optionsOrFn;
  if (typeof fn !== "function") throw new TypeError(`autocast: expected a function to run, as ${usage}`);
  checkOptions("autocast", options, ["enabled"]);
  const enabled = options?.enabled ?? true;
  if (typeof enabled !== "boolean") throw new TypeError(`autocast: enabled must be a boolean, got ${String(enabled)}`);
  if (dtype !== "bfloat16") {
    throw new TypeError(`autocast: the CPU autocasts to "bfloat16" only, got ${JSON.stringify(dtype)}`);
  }
  const previous = active;
  active = enabled;
  const restore = () => (active = previous);
  return runThenRestore(fn, restore);
}

/** torch.is_autocast_enabled: whether the calling code runs inside an enabled autocast region. */
export function isAutocastEnabled(): boolean {
  return active;
}

/** torch.get_autocast_dtype("cpu"): the dtype autocast products round their operands to. */
export function getAutocastDtype(): "bfloat16" {
  return "bfloat16";
}

/**
 * At module level, not a closure inside lowPrecisionProduct: every matmul asks, and under tsx (the
 * benches, `--conditions=source`) each closure made per call also paid esbuild's `__name` helper, a
 * defineProperty of about 0.5 µs, a sixth of a 32×32 product through the API.
 */
function autocastEligible(t: Tensor): boolean {
  return t.dtype === "float32" || t.dtype === "bfloat16";
}

/**
 * Whether a product of a and b runs on the bfloat16 GEMM: inside autocast for float32 and
 * bfloat16 operands (float64 stays float64, as in PyTorch), and anywhere for two bfloat16 ones.
 */
export function lowPrecisionProduct(a: Tensor, b: Tensor): boolean {
  if (active) return autocastEligible(a) && autocastEligible(b);
  return a.dtype === "bfloat16" && b.dtype === "bfloat16";
}

/**
 * What the ops autocast runs in float32 (layer norm, softmax, cross entropy) do with an operand:
 * inside autocast a bfloat16 one (a bfloat16 parameter or embedding) is widened, differentiably,
 * as PyTorch's autocast casts them; anywhere else it is returned as it is.
 */
export function autocastFloat32<T extends Tensor | null | undefined>(t: T): T {
  return active && t && t.dtype === "bfloat16" ? (to(t, "float32") as T) : t;
}
