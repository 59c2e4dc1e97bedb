import { getBackend } from "../backend/index.js";
import { isGradEnabled } from "../autograd/grad_mode.js";
import { record } from "../autograd/record.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { matmul } from "./matmul.js";
import { sum } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape, transpose } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

/**
 * y = x·Wᵀ + b (torch.nn.functional.linear) for x of [..., in], W of [out, in], b of [out].
 * The bias is written into the output first and the GEMM accumulates onto it (addmm), and the
 * backward uses W and x in place through transposed strides, so neither is ever copied.
 */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  if (hasBFloat16(x, weight, bias)) {
    assertSameDType(x, weight, "linear");
    if (bias) assertSameDType(x, bias, "linear");
    return inFloat32(linear, [x, weight, bias]);
  }
  assertTensor(x, "linear");
  assertTensor(weight, "linear", "weight");
  const integral = x.dtype === "int32" || (x.dtype === "bool" && (x.numel === 0 || weight.numel === 0));
  if (integral && weight.dtype === x.dtype && (!bias || (bias.dtype === x.dtype && x.dtype === "int32"))) {
    // Integer products, exact in float64 for any sum that fits int32 (PyTorch computes in integers;
    // it has no bool GEMM but returns empty or zero-sized bool products without running one).
    const wide = (t: Tensor | null | undefined) => (t ? to(t, "float64") : t);
    return to(linear(to(x, "float64"), wide(weight)!, wide(bias)), x.dtype);
  }
  assertFloating(x, "linear");
  assertSameDType(x, weight, "linear");
  const inFeatures = x.shape[x.ndim - 1];
  if (weight.ndim !== 2 || weight.shape[1] !== inFeatures) {
    throw new RangeError(`linear: the input's last dim (${formatShape(x.shape)}) must match the weight's [out, in] = ${formatShape(weight.shape)}`);
  }
  const outFeatures = weight.shape[0];
  if (bias && (bias.ndim !== 1 || bias.shape[0] !== outFeatures)) {
    throw new RangeError(`linear: the bias must have shape [${outFeatures}], got ${formatShape(bias.shape)}`);
  }
  if (bias) assertSameDType(x, bias, "linear");
  if (x.ndim === 0) throw new RangeError("linear: the input needs at least 1 dimension");

  // Rows from the leading dims, not numel / in: with 0 input features there are still rows (of bias).
  const rows = x.shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const xc = contiguousData(x);
  const w = contiguousData(weight);
  const out = emptyTensor(x.dtype, [...x.shape.slice(0, -1), outFeatures]);
  const backend = getBackend();
  if (bias) {
    const b = contiguousData(bias);
    backend.copy({ data: b.storage.data, offset: b.offset, strides: [0, 1] }, [rows, outFeatures], out.storage.data, 0);
  }
  backend.matmul({
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
  return record(
    out,
    "LinearBackward",
    [x, weight, bias],
    (g) => {
      const g2 = reshape(g, [rows, outFeatures]);
      const x2 = reshape(xc.detach(), [rows, inFeatures]);
      return [
        x.requiresGrad ? reshape(matmul(g2, weight), x.shape) : null,
        weight.requiresGrad ? matmul(transpose(g2, 0, 1), isGradEnabled() ? reshape(x, [rows, inFeatures]) : x2) : null,
        bias?.requiresGrad ? sum(g2, 0) : null,
      ];
    },
    [x, weight],
  );
}
