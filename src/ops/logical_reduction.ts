import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { eq, gt, ne } from "./elementwise.js";
import { installMethods } from "./install.js";
import { reductionDims, sum, type Dims } from "./reduction.js";
import { assertTensor } from "./util.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    any(dim?: Dims, keepdim?: boolean): Tensor;
    all(dim?: Dims, keepdim?: boolean): Tensor;
  }
}

/** Counts, per output element, the inputs for which `test` holds (as int32). */
function countWhere(test: Tensor, dim: Dims, keepdim: boolean, op: string): Tensor {
  // PyTorch's any/all take dim=[] as "reduce nothing" (unlike sum, where [] means every dim).
  if (Array.isArray(dim) && dim.length === 0) return to(test, "int32");
  const dims = reductionDims(dim, test.ndim, op);
  // A 0-d tensor reduces to itself (reductionDims has checked that dim is 0 or -1).
  if (test.ndim === 0) return to(test, "int32");
  return sum(test, dims, keepdim);
}

/** x detached; bfloat16 (storage only, whose −0 has non-zero bits) is read as float32. */
function readable(x: Tensor): Tensor {
  return x.dtype === "bfloat16" ? to(x.detach(), "float32") : x.detach();
}

/**
 * torch.any: whether any element over dims (all when omitted; none for []) is non-zero; a bool tensor. NaN is
 * non-zero, so it counts as true; an empty reduction is false.
 */
export function any(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  assertTensor(x, "any");
  return gt(countWhere(ne(readable(x), 0), dim, keepdim, "any"), 0);
}

/** torch.all: whether every element over dims (all when omitted) is non-zero; empty is true. */
export function all(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  assertTensor(x, "all");
  return eq(countWhere(eq(readable(x), 0), dim, keepdim, "all"), 0);
}

installMethods({ any, all });
