import { autocastFloat32 } from "./autocast.js";
import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { needsGradOf, record } from "../autograd/record.js";
import { normalizeDim } from "../tensor/shape.js";
import { Tensor } from "../tensor/tensor.js";
import { exp, mul, sub } from "./elementwise.js";
import { installMethods } from "./install.js";
import { sum } from "./reduction.js";
import { assertFloating, assertTensor, contiguousData, emptyLike, emptyTensor, viewOf } from "./util.js";
import { transpose } from "./view.js";
import { hasBFloat16OutsideAutocast, inFloat32 } from "./bfloat16.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    softmax(dim: number): Tensor;
    logSoftmax(dim: number): Tensor;
  }
}

/**
 * Runs a row-wise kernel over `dim`: moves dim last (a copy unless it already is), runs the
 * kernel on the resulting [rows, cols] block, and moves the result back into a contiguous tensor.
 */
function alongDim(inputs: Tensor[], d: number, kernel: (data: Tensor[], rows: number, cols: number, out: Tensor) => void): Tensor {
  const x = inputs[0];
  const last = x.ndim - 1;
  const moved = inputs.map((t) => contiguousData(d === last || x.ndim === 0 ? t : transpose(t.detach(), d, last)));
  const cols = x.ndim === 0 ? 1 : x.shape[d];
  const rows = cols === 0 ? 0 : x.numel / cols;
  const result = emptyTensor(x.dtype, moved[0].shape);
  kernel(moved, rows, cols, result);
  if (d === last || x.ndim === 0) return result;
  const back = transpose(result, d, last);
  const out = emptyTensor(x.dtype, x.shape);
  getBackend().copy(viewOf(back), back.shape, out.storage.data, 0);
  return out;
}

function softmaxImpl(x: Tensor, dim: number, log: boolean): Tensor {
  const name = log ? "logSoftmax" : "softmax";
  assertTensor(x, name);
  x = autocastFloat32(x);
  assertFloating(x, name);
  const d = normalizeDim(dim, x.ndim, name);
  const out = alongDim([x], d, ([m], rows, cols, o) => getBackend().softmax(m.storage.data, m.offset, rows, cols, log, o.storage.data));
  const y = out.detach();
  return record(
    out,
    log ? "LogSoftmaxBackward" : "SoftmaxBackward",
    [x],
    (g) => {
      if (!isGradEnabled()) {
        const fused = alongDim([g, y], d, ([gm, ym], rows, cols, o) =>
          getBackend().softmaxBackward(gm.storage.data.subarray(gm.offset), ym.storage.data.subarray(ym.offset), rows, cols, log, o.storage.data),
        );
        return [fused];
      }
      // The same formulas with public ops, so that double backward sees y as a function of x.
      const yx = log ? logSoftmax(x, d) : softmax(x, d);
      return log ? [sub(g, mul(exp(yx), sum(g, d, true)))] : [mul(yx, sub(g, sum(mul(g, yx), d, true)))];
    },
    [out],
  );
}

/**
 * The common call: a dense float32/float64 tensor along its last dim, with nothing to record. One
 * kernel call into a tensor sharing x's layout; null when the general path must run (it builds the
 * row view, the detached copy and the backward closure that an inference loop never uses).
 */
function lastDimNoGrad(x: Tensor, dim: number, log: boolean): Tensor | null {
  if (!(x instanceof Tensor) || (x.dtype !== "float32" && x.dtype !== "float64") || x.ndim === 0) return null;
  if ((dim !== -1 && dim !== x.ndim - 1) || !x.hasDenseStrides() || needsGradOf(x)) return null;
  const cols = x.shape[x.ndim - 1];
  const out = emptyLike(x);
  if (x.numel > 0) getBackend().softmax(x.storage.data, x.offset, x.numel / cols, cols, log, out.storage.data);
  return out;
}

/** exp(x) / Σ exp(x) along dim, computed with the maximum subtracted so that large inputs do not overflow. */
export function softmax(x: Tensor, dim: number): Tensor {
  const fast = lastDimNoGrad(x, dim, false);
  if (fast) return fast;
  if (hasBFloat16OutsideAutocast(x, dim)) return inFloat32(softmax, [x, dim]);
  return softmaxImpl(x, dim, false);
}

/** log(softmax(x)) along dim, computed as x − max − log Σ exp(x − max). */
export function logSoftmax(x: Tensor, dim: number): Tensor {
  const fast = lastDimNoGrad(x, dim, true);
  if (fast) return fast;
  if (hasBFloat16OutsideAutocast(x, dim)) return inFloat32(logSoftmax, [x, dim]);
  return softmaxImpl(x, dim, true);
}

installMethods({ softmax, logSoftmax });
