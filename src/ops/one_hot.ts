import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { contiguousData, emptyTensor, assertTensor } from "./util.js";

/**
 * torch.nn.functional.one_hot: int32 class indices of any shape to an int32 tensor with a new last
 * dim of numClasses (−1: one more than the largest index), 1 at each index and 0 elsewhere.
 * (PyTorch returns int64, which ringtorch does not have.)
 */
export function oneHot(x: Tensor, numClasses = -1): Tensor {
  assertTensor(x, "oneHot");
  if (x.dtype !== "int32") throw new TypeError(`oneHot: expected int32 class indices, got ${x.dtype} with shape ${formatShape(x.shape)}; convert with .int()`);
  if (!Number.isInteger(numClasses) || numClasses < -1) throw new RangeError(`oneHot: numClasses must be -1 or a non-negative integer, got ${numClasses}`);
  const c = contiguousData(x);
  const values = (c.storage.data as Int32Array).subarray(c.offset, c.offset + x.numel);
  let largest = -1;
  for (let i = 0; i < values.length; i++) {
    if (values[i] < 0) throw new RangeError(`oneHot: class values must be non-negative, got ${values[i]} at flat position ${i}`);
    largest = Math.max(largest, values[i]);
  }
  if (numClasses <= 0 && values.length === 0) {
    // PyTorch refuses numClasses 0 for an empty tensor too (it treats it as "infer").
    throw new RangeError(`oneHot: cannot infer numClasses from an empty tensor (got ${numClasses}); pass a positive numClasses`);
  }
  if (numClasses === -1) {
    if (values.length === 0) throw new RangeError("oneHot: cannot infer numClasses from an empty tensor; pass numClasses");
    numClasses = largest + 1;
  } else if (largest >= numClasses) {
    throw new RangeError(`oneHot: class values must be smaller than numClasses (${numClasses}), got ${largest}`);
  }
  const out = emptyTensor("int32", [...x.shape, numClasses]);
  const data = out.storage.data;
  data.fill(0);
  for (let i = 0; i < values.length; i++) data[i * numClasses + values[i]] = 1;
  return out;
}
