import { noGrad } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import type { Tensor } from "../tensor/tensor.js";
import { to, zeros } from "./creation.js";
import { abs, add, eq, exp, log, mul, sub, where } from "./elementwise.js";
import { extremeOver } from "./amax.js";
import { installMethods } from "./install.js";
import { reducedShape, reductionDims, sum, type Dims } from "./reduction.js";
import { assertTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    logsumexp(dim?: Dims, keepdim?: boolean): Tensor;
  }
}

/**
 * torch.logsumexp: log Σ exp(x) over dims, computed as m + log Σ exp(x − m) with m the (detached)
 * maximum so that nothing overflows. The gradient is PyTorch's g·exp(x − result), written with
 * public ops so double backward works. An infinite maximum is replaced by 0 (PyTorch's rule), so a
 * row of −∞ gives −∞ and a row holding +∞ gives +∞, not NaN. Integer inputs compute in float32.
 */
export function logsumexp(x: Tensor, dim?: Dims, keepdim = false): Tensor {
  if (hasBFloat16(x, dim, keepdim)) return inFloat32(logsumexp, [x, dim, keepdim]);
  assertTensor(x, "logsumexp");
  const input = x.dtype === "float32" || x.dtype === "float64" ? x : to(x.detach(), "float32");
  const dims = reductionDims(Array.isArray(dim) && dim.length === 0 ? null : dim, input.ndim, "logsumexp");
  const keptShape = reducedShape(input.shape, dims, true);
  const m = noGrad(() => {
    if (input.numel === 0) return zeros(keptShape, { dtype: input.dtype });
    const raw = extremeOver("max", input, dims, "logsumexp");
    return where(eq(abs(raw), Infinity), 0, raw);
  });
  const kept = noGrad(() => add(log(sum(exp(sub(input, m)), dims, true)), m));
  const out = reshape(kept, reducedShape(input.shape, dims, keepdim)).detach();
  // PyTorch's gradient, g·exp(x − result), from the recorded result, so double backward sees its
  // dependence on x (softmax computed apart would differ where the result rounds, e.g. ties at 1e30).
  return record(out, "LogsumexpBackward", [input], (g) => [mul(reshape(g, kept.shape), exp(sub(input, reshape(out, kept.shape))))], [input]);
}

installMethods({ logsumexp });
