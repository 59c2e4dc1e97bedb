import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { autocastFloat32 } from "./autocast.js";
import { add, mul, rsqrt, sub } from "./elementwise.js";
import { mean, sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";
import { hasBFloat16, hasBFloat16OutsideAutocast, inFloat32 } from "./bfloat16.js";

/**
 * torch.nn.functional.layer_norm: normalises over the trailing `normalizedShape` dims with the
 * biased variance, then scales by weight and shifts by bias (both of `normalizedShape`, optional).
 */
export function layerNorm(x: Tensor, normalizedShape: readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
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
  const dataOf = (t: Tensor | null) => (t ? t.storage.data.subarray(t.offset, t.offset + t.numel) : null);
  const out = emptyTensor(x.dtype, x.shape);
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
