import type { Tensor } from "../tensor/tensor.js";
import { installMethods } from "./install.js";
import { assertTensor } from "./util.js";
import { expand, reshape } from "./view.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    repeat(...sizes: (number | readonly number[])[]): Tensor;
  }
}

/**
 * torch.Tensor.repeat: tiles x `sizes[i]` times along each dim; extra leading sizes add dims.
 * Done as a view that interleaves a broadcast dim before each dim, then one copy by reshape, so
 * the gradient is the sum over the tiles.
 */
export function repeat(x: Tensor, ...sizeArgs: (number | readonly number[])[]): Tensor {
  assertTensor(x, "repeat");
  const sizes = sizeArgs.length === 1 && Array.isArray(sizeArgs[0]) ? [...(sizeArgs[0] as number[])] : (sizeArgs as number[]);
  if (sizes.some((s) => !Number.isInteger(s) || s < 0)) throw new RangeError(`repeat: sizes must be non-negative integers, got [${sizes.join(", ")}]`);
  if (sizes.length < x.ndim) {
    throw new RangeError(`repeat: the number of repeat sizes (${sizes.length}) cannot be smaller than the number of dims of the tensor (${x.ndim})`);
  }
  const shape = [...new Array<number>(sizes.length - x.ndim).fill(1), ...x.shape];
  const interleaved = shape.flatMap((s) => [1, s]);
  const tiled = shape.flatMap((s, i) => [sizes[i], s]);
  return reshape(expand(reshape(x, interleaved), tiled), shape.map((s, i) => s * sizes[i]));
}

installMethods({ repeat });
