import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { needsGrad, needsGradOf, record } from "../autograd/record.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import type { TypedArray } from "../tensor/dtype.js";
import { Tensor } from "../tensor/tensor.js";
import { autocastFloat32 } from "./autocast.js";
import { add, mul, rsqrt, sub } from "./elementwise.js";
import { mean, sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyLike, emptyTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16OutsideAutocast, inFloat32 } from "./bfloat16.js";

/**
 * Where a forward that nobody will differentiate writes its per-row mean and rstd: grown as needed
 * and reused, since only the backward reads them.
 */
const statsScratch = { float32: [new Float32Array(0), new Float32Array(0)], float64: [new Float64Array(0), new Float64Array(0)] };

function scratchFor(dtype: "float32" | "float64", rows: number): TypedArray[] {
  const pair = statsScratch[dtype];
  if (pair[0].length < rows) {
    const Ctor = dtype === "float32" ? Float32Array : Float64Array;
    statsScratch[dtype] = [new Ctor(rows), new Ctor(rows)] as never;
  }
  return statsScratch[dtype];
}

/** The tensor's elements as one typed array (the storage's own when it covers it exactly). */
function dataOf(t: Tensor | null): TypedArray | null {
  if (!t) return null;
  const d = t.storage.data;
  return t.offset === 0 && t.numel === d.length ? d : (d.subarray(t.offset, t.offset + t.numel) as TypedArray);
}

/** An optional weight or bias the fast path can hand to the kernel as it is. */
function plainParam(t: Tensor | null | undefined, x: Tensor, cols: number): boolean {
  return !t || (t instanceof Tensor && t.dtype === x.dtype && t.ndim === 1 && t.shape[0] === cols && t.hasDenseStrides() && !needsGradOf(t));
}

/**
 * The common call: a dense float32/float64 tensor normalised over its last dim, with nothing to
 * record. One kernel call, without the checks' and the general path's temporary arrays; null when
 * the general path must run (it also gives the errors).
 */
function lastDimNoGrad(x: Tensor, normalizedShape: readonly number[], weight: Tensor | null | undefined, bias: Tensor | null | undefined, eps: number): Tensor | null {
  if (!(x instanceof Tensor) || (x.dtype !== "float32" && x.dtype !== "float64") || x.ndim === 0 || typeof eps !== "number") return null;
  if (!Array.isArray(normalizedShape) || normalizedShape.length !== 1) return null;
  const cols = x.shape[x.ndim - 1];
  if (normalizedShape[0] !== cols || cols === 0 || !x.hasDenseStrides() || needsGradOf(x)) return null;
  if (!plainParam(weight, x, cols) || !plainParam(bias, x, cols)) return null;
  const rows = x.numel / cols;
  const out = emptyLike(x);
  if (rows === 0) return out;
  const [m, r] = scratchFor(x.dtype, rows);
  getBackend().layerNorm(dataOf(x)!, rows, cols, dataOf(weight ?? null), dataOf(bias ?? null), eps, out.storage.data, m, r);
  return out;
}

/**
 * torch.nn.functional.layer_norm: normalises over the trailing `normalizedShape` dims with the
 * biased variance, then scales by weight and shifts by bias (both of `normalizedShape`, optional).
 */
export function layerNorm(x: Tensor, normalizedShape: readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  const fast = lastDimNoGrad(x, normalizedShape, weight, bias, eps);
  if (fast) return fast;
  if (hasBFloat16OutsideAutocast(x, normalizedShape, weight, bias, eps)) return inFloat32(layerNorm, [x, normalizedShape, weight, bias, eps]);
  assertTensor(x, "layerNorm");
  [x, weight, bias] = [autocastFloat32(x), autocastFloat32(weight), autocastFloat32(bias)];
  assertFloating(x, "layerNorm");
  const k = normalizedShape.length;
  if (k === 0 || k > x.ndim || !shapesEqual(x.shape.slice(x.ndim - k), normalizedShape)) {
    throw new RangeError(`layerNorm: normalizedShape ${formatShape(normalizedShape)} must be the trailing dims of the input, got input shape ${formatShape(x.shape)}`);
  }
  for (const [t, what] of [[weight, "weight"], [bias, "bias"]] as const) {
    if (!t) continue;
    assertSameDType(x, t, "layerNorm");
    if (!shapesEqual(t.shape, normalizedShape)) {
      throw new RangeError(`layerNorm: the ${what} must have shape ${formatShape(normalizedShape)}, got ${formatShape(t.shape)}`);
    }
  }
  const cols = normalizedShape.reduce((a, b) => a * b, 1);
  const rows = cols === 0 ? 0 : x.numel / cols;
  const xc = contiguousData(x);
  const wc = weight ? contiguousData(weight) : null;
  const bc = bias ? contiguousData(bias) : null;
  const out = emptyLike(xc);
  if (!needsGrad([x, weight, bias])) {
    const [m, r] = scratchFor(x.dtype as "float32" | "float64", rows);
    getBackend().layerNorm(dataOf(xc)!, rows, cols, dataOf(wc), dataOf(bc), eps, out.storage.data, m, r);
    return out;
  }
  const meanT = emptyTensor(x.dtype, [rows]);
  const rstdT = emptyTensor(x.dtype, [rows]);
  getBackend().layerNorm(dataOf(xc)!, rows, cols, dataOf(wc), dataOf(bc), eps, out.storage.data, meanT.storage.data, rstdT.storage.data);

  const dims = Array.from({ length: k }, (_, i) => x.ndim - k + i);
  const batchDims = Array.from({ length: x.ndim - k }, (_, i) => i);
  return record(
    out,
    "LayerNormBackward",
    [x, weight, bias],
    (g) => {
      if (!isGradEnabled()) {
        const gc = contiguousData(g);
        const gx = emptyTensor(x.dtype, x.shape);
        const gw = weight?.requiresGrad ? emptyTensor(x.dtype, normalizedShape) : null;
        const gb = bias?.requiresGrad ? emptyTensor(x.dtype, normalizedShape) : null;
        getBackend().layerNormBackward(
          dataOf(gc)!, dataOf(xc)!, rows, cols, dataOf(wc), meanT.storage.data, rstdT.storage.data,
          gx.storage.data, gw ? gw.storage.data : null, gb ? gb.storage.data : null,
        );
        return [x.requiresGrad ? gx : null, gw, gb];
      }
      // x̂ = (x − mean)·rstd and ĝ = g·w give dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), in public
      // ops and with mean/rstd recomputed from x, so that double backward is right.
      const centered = sub(x, mean(x, dims, true));
      const rstd = rsqrt(add(mean(mul(centered, centered), dims, true), eps));
      const xhat = mul(centered, rstd);
      const gh = weight ? mul(g, weight) : g;
      const gx = mul(rstd, sub(sub(gh, mean(gh, dims, true)), mul(xhat, mean(mul(gh, xhat), dims, true))));
      const overBatch = (t: Tensor) => reshape(batchDims.length > 0 ? sum(t, batchDims) : t, normalizedShape);
      return [
        x.requiresGrad ? gx : null,
        weight?.requiresGrad ? overBatch(mul(g, xhat)) : null,
        bias?.requiresGrad ? overBatch(g) : null,
      ];
    },
    [x, ...(weight ? [weight] : [])],
  );
}
