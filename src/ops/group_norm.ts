import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { add, mul } from "./elementwise.js";
import { layerNorm } from "./norm.js";
import { assertFloating, assertSameDType, assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

/**
 * torch.nn.functional.group_norm: x [N, C, ...] split into numGroups groups of channels, each
 * (sample, group) normalised to zero mean and unit biased variance, then scaled and shifted per
 * channel. It is layer norm over [N·G, C/G·…] rows (the native kernel), so its gradient is layer
 * norm's and the per-channel affine's.
 */
export function groupNorm(x: Tensor, numGroups: number, weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  assertTensor(x, "groupNorm");
  // bfloat16 normalises in float32 and rounds once, as PyTorch's CPU kernel (mixed float32
  // weights are accepted there too).
  if (hasBFloat16(x, weight, bias)) return inFloat32(groupNorm, [x, numGroups, weight ?? null, bias ?? null, eps]);
  assertFloating(x, "groupNorm");
  if (x.ndim < 2) throw new RangeError(`groupNorm: expected an input of shape [N, C, ...] (at least 2-d), got ${formatShape(x.shape)}`);
  const [n, c] = x.shape;
  if (!Number.isInteger(numGroups) || numGroups < 1 || c % numGroups !== 0) {
    throw new RangeError(`groupNorm: the ${c} channels of input ${formatShape(x.shape)} must divide into numGroups=${numGroups} groups`);
  }
  for (const [t, what] of [[weight, "weight"], [bias, "bias"]] as const) {
    if (!t) continue;
    assertTensor(t, "groupNorm", what);
    assertSameDType(x, t, "groupNorm");
    if (t.ndim !== 1 || t.shape[0] !== c) throw new RangeError(`groupNorm: the ${what} must have shape [${c}], got ${formatShape(t.shape)}`);
  }
  const perGroup = x.numel / Math.max(1, n * numGroups);
  // As F.group_norm's _verify_batch_size (which sees [N·C/G, G, spatial...] and refuses when its
  // sizes other than dim 1 multiply to 1).
  if ((n * c) / numGroups * (x.numel / Math.max(1, n * c)) === 1) throw new RangeError(`groupNorm: expected more than 1 value per group, got input ${formatShape(x.shape)} with numGroups=${numGroups}`);
  let y = reshape(layerNorm(reshape(x, [n, numGroups, perGroup]), [perGroup], null, null, eps), x.shape);
  const perChannel = (t: Tensor) => reshape(t, [1, c, ...new Array<number>(x.ndim - 2).fill(1)]);
  if (weight) y = mul(y, perChannel(weight));
  if (bias) y = add(y, perChannel(bias));
  return y;
}
