import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { rand, to, zeros } from "./creation.js";
import { lt, mul } from "./elementwise.js";
import { assertFloating, assertTensor } from "./util.js";
import { checkArity, checkOptions } from "../util/options.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export interface DropoutOptions {
  /** Off (the default is on) makes dropout the identity, as in evaluation mode. */
  training?: boolean;
  generator?: Generator;
}

/**
 * torch.nn.functional.dropout: zeroes each element with probability p and scales the survivors
 * by 1/(1 − p), so the expectation is unchanged. The gradient is the same mask and scale, which
 * autograd gets from the multiplication.
 */
export function dropout(x: Tensor, p = 0.5, options: DropoutOptions = {}): Tensor {
  if (hasBFloat16(x, p, options)) return inFloat32(dropout, [x, p, options]);
  checkArity("dropout", arguments, 3, "dropout(x, p, { training, generator })");
  checkOptions("dropout", options, ["training", "generator"]);
  assertTensor(x, "dropout");
  if (!(p >= 0 && p <= 1)) throw new RangeError(`dropout: the probability p must be in [0, 1], got ${p}`);
  if (options.training === false || p === 0) return x;
  // As PyTorch: p = 1 multiplies by a 0-d zero of x's dtype (so NaN stays NaN and any dtype works).
  if (p === 1) return mul(x, zeros([], { dtype: x.dtype }));
  assertFloating(x, "dropout");
  const keep = lt(rand(x.shape, { dtype: x.dtype, generator: options.generator }), 1 - p);
  return mul(x, mul(to(keep, x.dtype), 1 / (1 - p)));
}
