import { record } from "../autograd/record.js";
import { noGrad } from "../autograd/grad_mode.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { div, eq, mul } from "./elementwise.js";
import { max, min } from "./extrema.js";
import { installMethods } from "./install.js";
import { reducedShape, reductionDims, sum, type Dims } from "./reduction.js";
import { assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    amax(dim?: Dims, keepdim?: boolean): Tensor;
    amin(dim?: Dims, keepdim?: boolean): Tensor;
  }
}

/** max/min over several dims (all when none), kept as size 1, without recording. NaN wins. */
export function extremeOver(op: "max" | "min", x: Tensor, dims: readonly number[], name: string): Tensor {
  for (const d of dims) {
    if (x.shape[d] === 0) throw new RangeError(`${name}: cannot reduce dim ${d} of size 0 (shape ${formatShape(x.shape)}); it has no ${op === "max" ? "largest" : "smallest"} element`);
  }
  return noGrad(() => {
    let acc = x.detach();
    for (const d of dims) acc = (op === "max" ? max(acc, d, true) : min(acc, d, true)).values;
    return acc;
  });
}

function amaxAmin(op: "max" | "min", x: Tensor, dim: Dims, keepdim: boolean): Tensor {
  const name = op === "max" ? "amax" : "amin";
  assertTensor(x, name);
  // PyTorch's amax(dim=()) reduces every dim, as does an absent dim.
  const dims = reductionDims(Array.isArray(dim) && dim.length === 0 ? null : dim, x.ndim, name);
  const kept = extremeOver(op, x, dims, name);
  const out = reshape(kept, reducedShape(x.shape, dims, keepdim)).detach();
  return record(out, op === "max" ? "AmaxBackward" : "AminBackward", [x], (g) => {
    // The gradient is shared evenly between the elements equal to the result (PyTorch's rule).
    const hits = to(eq(x, kept), g.dtype);
    return [div(mul(hits, reshape(g, kept.shape)), sum(hits, dims, true))];
  });
}

/** torch.amax: the largest value over dims (all when omitted); ties share the gradient evenly. */
export function amax(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(amax, [x, dim, keepdim]);
  return amaxAmin("max", x, dim, keepdim);
}

/** torch.amin: the smallest value over dims (all when omitted); ties share the gradient evenly. */
export function amin(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(amin, [x, dim, keepdim]);
  return amaxAmin("min", x, dim, keepdim);
}

installMethods({ amax, amin });
