import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { deferLeafGradients } from "../autograd/engine.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { isAutocastEnabled, lowPrecisionProduct } from "./autocast.js";
import { backwardProduct } from "./matmul.js";
import { sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape, transpose } from "./view.js";

/**
 * y = x·Wᵀ + b (torch.nn.functional.linear) for x of [..., in], W of [out, in], b of [out].
 * The bias is written into the output first and the GEMM accumulates onto it (addmm), and the
 * backward uses W and x in place through transposed strides, so neither is ever copied.
 */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  assertTensor(x, "linear");
  assertTensor(weight, "linear", "weight");
  const integral = x.dtype === "int32" || (x.dtype === "bool" && (x.numel === 0 || weight.numel === 0));
  if (integral && weight.dtype === x.dtype && (!bias || (bias.dtype === x.dtype && x.dtype === "int32"))) {
    // Integer products, exact in float64 for any sum that fits int32 (PyTorch computes in integers;
    // it has no bool GEMM but returns empty or zero-sized bool products without running one).
    const wide = (t: Tensor | null | undefined) => (t ? to(t, "float64") : t);
    return to(linear(to(x, "float64"), wide(weight)!, wide(bias)), x.dtype);
  }
  // Inside autocast (or for bfloat16 x and weight) the product runs on the bfloat16 GEMM.
  // Outside autocast the bias must be bfloat16 too (PyTorch refuses mixed dtypes there).
  const biasFits = !bias || bias.dtype === "bfloat16" || (bias.dtype === "float32" && isAutocastEnabled());
  const lowp = lowPrecisionProduct(x, weight) && biasFits;
  if (!lowp) {
    assertFloating(x, "linear");
    assertSameDType(x, weight, "linear");
  }
  const inFeatures = x.shape[x.ndim - 1];
  if (weight.ndim !== 2 || weight.shape[1] !== inFeatures) {
    throw new RangeError(`linear: the input's last dim (${formatShape(x.shape)}) must match the weight's [out, in] = ${formatShape(weight.shape)}`);
  }
  const outFeatures = weight.shape[0];
  if (bias && (bias.ndim !== 1 || bias.shape[0] !== outFeatures)) {
    throw new RangeError(`linear: the bias must have shape [${outFeatures}], got ${formatShape(bias.shape)}`);
  }
  if (bias && !lowp) assertSameDType(x, bias, "linear");
  if (x.ndim === 0) throw new RangeError("linear: the input needs at least 1 dimension");

  // Rows from the leading dims, not numel / in: with 0 input features there are still rows (of bias).
  const rows = x.shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const xc = contiguousData(x);
  const w = contiguousData(weight);
  const out = emptyTensor(lowp ? "float32" : x.dtype, [...x.shape.slice(0, -1), outFeatures]);
  const backend = getBackend();
  if (bias) {
    const b = contiguousData(bias);
    backend.copy({ data: b.storage.data, offset: b.offset, strides: [0, 1] }, [rows, outFeatures], out.storage.data, 0);
  }
  (lowp ? backend.matmulBf16 : backend.matmul).call(backend, {
    batch: 1,
    m: rows,
    n: outFeatures,
    k: inFeatures,
    a: xc.storage.data,
    aOffset: xc.offset,
    aRowStride: inFeatures,
    aColStride: 1,
    aBatchStride: 0,
    b: w.storage.data,
    bOffset: w.offset,
    bRowStride: 1,
    bColStride: inFeatures,
    bBatchStride: 0,
    out: out.storage.data,
    outOffset: 0,
    alpha: 1,
    beta: bias ? 1 : 0,
  });
  const result = record(
    out,
    "LinearBackward",
    [x, weight, bias],
    (g) => {
      const g2 = reshape(g, [rows, outFeatures]);
      const x2 = reshape(xc.detach(), [rows, inFeatures]);
      const product = (a: Tensor, b: Tensor) => backwardProduct(a, b, lowp);
      const dx = x.requiresGrad ? to(reshape(product(g2, weight), x.shape), x.dtype) : null;
      const leaves = (): (Tensor | null)[] => [
        weight.requiresGrad ? to(product(transpose(g2, 0, 1), isGradEnabled() ? reshape(x, [rows, inFeatures]) : x2), weight.dtype) : null,
        bias?.requiresGrad ? biasGrad(g2, bias) : null,
      ];
      // Where the pass defers them (a pipeline stage sending dx first), the weight and bias gradients run later.
      if (dx && deferLeafGradients([weight, bias], leaves)) return [dx, null, null];
      return [dx, ...leaves()];
    },
    [x, weight],
  );
  // Outside autocast, bfloat16 operands give a bfloat16 result, as in PyTorch.
  return lowp && x.dtype === "bfloat16" && weight.dtype === "bfloat16" && !isAutocastEnabled() ? to(result, "bfloat16") : result;
}

/**
 * The bias's gradient, the column sums of g2 [rows, out]. Outside create_graph, for a dense float
 * g2 of the bias's dtype, one reduce kernel writes it: sum() would also make the [1, out]
 * intermediate, its reshape and detach and the shape arithmetic, which a training step pays once
 * per Linear, about a fifth of this node's time for a small batch.
 */
function biasGrad(g2: Tensor, bias: Tensor): Tensor {
  if (isGradEnabled() || g2.dtype !== bias.dtype || (g2.dtype !== "float32" && g2.dtype !== "float64") || !g2.hasDenseStrides()) return to(sum(g2, 0), bias.dtype);
  const [rows, cols] = g2.shape;
  const out = emptyTensor(g2.dtype, [cols]);
  getBackend().reduce("sum", g2.storage.data, g2.offset, 1, rows, cols, out.storage.data, null);
  return out;
}
