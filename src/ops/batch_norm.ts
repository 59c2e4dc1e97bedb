import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { tensor } from "./creation.js";
import { add, mul, rsqrt, sub } from "./elementwise.js";
import { mean, sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";
import { noGrad } from "../autograd/grad_mode.js";
import { to } from "./creation.js";

/**
 * Sums a Float64Array over every rank in place (an all-reduce with SUM). Batch norm calls it once in
 * the forward with [Σx per channel, Σx² per channel, count] and once in the backward with
 * [Σg, Σg·(x − mean)]: that is all SyncBatchNorm adds to batch norm.
 */
export type CrossRankSum = (values: Float64Array) => void;

export interface BatchNormOptions {
  weight?: Tensor | null;
  bias?: Tensor | null;
  /** Normalise with this batch's statistics (and update the running ones) instead of the running ones. */
  training?: boolean;
  /** Weight of the new batch in the running statistics. */
  momentum?: number;
  eps?: number;
}

const dataOf = (t: Tensor) => t.storage.data.subarray(t.offset, t.offset + t.numel);

/**
 * torch.nn.functional.batch_norm over dim 1 of x [N, C, ...]: with `training` (or without running
 * statistics) normalises by the batch's mean and biased variance and, when running statistics are
 * given, moves them toward the batch's mean and unbiased variance by `momentum`, in place.
 */
export function batchNorm(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options: BatchNormOptions = {}): Tensor {
  checkOptions("batchNorm", options, ["weight", "bias", "training", "momentum", "eps"]);
  return batchNormWith(x, runningMean, runningVar, options, null);
}

/** batchNorm whose batch statistics (and their gradient's sums) are summed by `across` when given. */
export function batchNormWith(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options: BatchNormOptions, across: CrossRankSum | null): Tensor {
  const where = across ? "syncBatchNorm" : "batchNorm";
  assertTensor(x, where);
  if (hasBFloat16(x, runningMean, runningVar, options.weight, options.bias)) return inFloat32WithRunningStats(x, runningMean, runningVar, options, across);
  assertFloating(x, where);
  if (x.ndim < 2) throw new RangeError(`${where}: expected an input of shape [N, C, ...] (at least 2-d), got ${formatShape(x.shape)}`);
  const [n, c] = x.shape;
  const l = x.shape.slice(2).reduce((a, b) => a * b, 1);
  const { weight = null, bias = null, training = false, momentum = 0.1, eps = 1e-5 } = options;
  for (const [t, what] of [[weight, "weight"], [bias, "bias"], [runningMean, "runningMean"], [runningVar, "runningVar"]] as const) {
    if (!t) continue;
    assertTensor(t, where, what);
    assertSameDType(x, t, where);
    if (t.ndim !== 1 || t.shape[0] !== c) throw new RangeError(`${where}: ${what} must have shape [${c}] for an input with ${c} channels (${formatShape(x.shape)}), got ${formatShape(t.shape)}`);
  }
  if ((runningMean === null) !== (runningVar === null)) throw new TypeError(`${where}: pass both runningMean and runningVar, or neither`);
  const useBatch = training || runningMean === null;
  const backend = getBackend();
  const xc = contiguousData(x);
  const meanArr = new Float64Array(c);
  const invstd = new Float64Array(c);
  let count = n * l;
  if (useBatch) {
    const sums = new Float64Array(2 * c + 1);
    backend.channelSums(dataOf(xc), null, n, c, l, sums.subarray(0, c), sums.subarray(c, 2 * c));
    sums[2 * c] = count;
    across?.(sums);
    count = sums[2 * c];
    if (count <= 1) throw new RangeError(`${where}: expected more than 1 value per channel when training, got input of shape ${formatShape(x.shape)}${across ? ` (${count} over all ranks)` : ""}`);
    for (let i = 0; i < c; i++) {
      meanArr[i] = sums[i] / count;
      const variance = Math.max(0, sums[c + i] / count - meanArr[i] * meanArr[i]);
      invstd[i] = 1 / Math.sqrt(variance + eps);
      if (training && runningMean && runningVar) {
        const rm = runningMean.storage.data, rv = runningVar.storage.data;
        rm[runningMean.offset + i * runningMean.strides[0]] = (1 - momentum) * rm[runningMean.offset + i * runningMean.strides[0]] + momentum * meanArr[i];
        rv[runningVar.offset + i * runningVar.strides[0]] = (1 - momentum) * rv[runningVar.offset + i * runningVar.strides[0]] + (momentum * variance * count) / (count - 1);
      }
    }
    if (training && runningMean && runningVar) runningMean.storage.version++, runningVar.storage.version++;
  } else {
    const rm = contiguousData(runningMean!).storage.data, rv = contiguousData(runningVar!).storage.data;
    const [mo, vo] = [runningMean!.isContiguous() ? runningMean!.offset : 0, runningVar!.isContiguous() ? runningVar!.offset : 0];
    for (let i = 0; i < c; i++) [meanArr[i], invstd[i]] = [rm[mo + i], 1 / Math.sqrt(rv[vo + i] + eps)];
  }
  const w = weight ? Float64Array.from(dataOf(contiguousData(weight))) : new Float64Array(c).fill(1);
  const b = bias ? Float64Array.from(dataOf(contiguousData(bias))) : new Float64Array(c);
  const scale = w.map((v, i) => v * invstd[i]);
  const shift = b.map((v, i) => v - meanArr[i] * scale[i]);
  const out = emptyTensor(x.dtype, x.shape);
  backend.channelAffine(dataOf(xc), null, n, c, l, scale, null, shift, out.storage.data);

  const total = count;
  return record(
    out,
    "NativeBatchNormBackward",
    [x, weight, bias],
    (g) => {
      if (isGradEnabled()) {
        if (across) throw new Error("syncBatchNorm: gradients of gradients (createGraph) are not supported through SyncBatchNorm");
        return composedBackward(g, x, weight, bias, useBatch, eps, meanArr, invstd);
      }
      const gc = contiguousData(g);
      const sums = new Float64Array(2 * c);
      backend.channelSums(dataOf(gc), dataOf(xc), n, c, l, sums.subarray(0, c), sums.subarray(c));
      // Σg·(x − mean) from Σg and Σg·x; the weight and bias gradients use this rank's sums alone.
      for (let i = 0; i < c; i++) sums[c + i] -= meanArr[i] * sums[i];
      const gradWeight = weight?.requiresGrad ? tensor(sums.slice(c).map((v, i) => v * invstd[i]), { dtype: x.dtype }) : null;
      const gradBias = bias?.requiresGrad ? tensor(sums.slice(0, c), { dtype: x.dtype }) : null;
      if (!x.requiresGrad) return [null, gradWeight, gradBias];
      const gx = emptyTensor(x.dtype, x.shape);
      if (!useBatch) {
        backend.channelAffine(dataOf(gc), null, n, c, l, scale, null, new Float64Array(c), gx.storage.data);
        return [gx, gradWeight, gradBias];
      }
      across?.(sums);
      // dx = scale·(g − Σg/M − (x − mean)·invstd²·Σg(x − mean)/M), as a·g + b·x + shift per channel.
      const sx = new Float64Array(c);
      const sh = new Float64Array(c);
      for (let i = 0; i < c; i++) {
        const k = (scale[i] * invstd[i] * invstd[i] * sums[c + i]) / total;
        sx[i] = -k;
        sh[i] = -(scale[i] * sums[i]) / total + k * meanArr[i];
      }
      backend.channelAffine(dataOf(gc), dataOf(xc), n, c, l, scale, sx, sh, gx.storage.data);
      return [gx, gradWeight, gradBias];
    },
    [x, ...(weight ? [weight] : [])],
  );
}

/** The same gradients in public ops (batch statistics recomputed from x), for double backward. */
function composedBackward(g: Tensor, x: Tensor, weight: Tensor | null, bias: Tensor | null, useBatch: boolean, eps: number, meanArr: Float64Array, invstd: Float64Array): (Tensor | null)[] {
  const c = x.shape[1];
  const dims = [0, ...Array.from({ length: x.ndim - 2 }, (_, i) => i + 2)];
  const perChannel = (t: Tensor) => reshape(t, [1, c, ...new Array<number>(x.ndim - 2).fill(1)]);
  const gh = weight ? mul(g, perChannel(weight)) : g;
  let xhat: Tensor;
  let gx: Tensor;
  if (useBatch) {
    const centered = sub(x, mean(x, dims, true));
    const rstd = rsqrt(add(mean(mul(centered, centered), dims, true), eps));
    xhat = mul(centered, rstd);
    gx = mul(rstd, sub(sub(gh, mean(gh, dims, true)), mul(xhat, mean(mul(gh, xhat), dims, true))));
  } else {
    const m = perChannel(tensor(meanArr, { dtype: x.dtype }));
    const r = perChannel(tensor(invstd, { dtype: x.dtype }));
    xhat = mul(sub(x, m), r);
    gx = mul(gh, r);
  }
  return [x.requiresGrad ? gx : null, weight?.requiresGrad ? sum(mul(g, xhat), dims) : null, bias?.requiresGrad ? sum(g, dims) : null];
}

/**
 * bfloat16 batch norm as PyTorch's CPU kernel: statistics and normalisation in float32, the output
 * rounded once; bfloat16 running statistics are updated through float32 copies, rounded back in place.
 */
function inFloat32WithRunningStats(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options: BatchNormOptions, across: CrossRankSum | null): Tensor {
  const wide = (t: Tensor | null) => (t && t.dtype === "bfloat16" ? noGrad(() => to(t, "float32")) : t);
  const [rm, rv] = [wide(runningMean), wide(runningVar)];
  const out = inFloat32((input: Tensor, o: BatchNormOptions) => batchNormWith(input, rm, rv, o, across), [x, { ...options }]);
  noGrad(() => {
    if (runningMean && rm && rm !== runningMean) runningMean.copy_(rm);
    if (runningVar && rv && rv !== runningVar) runningVar.copy_(rv);
  });
  return out;
}
