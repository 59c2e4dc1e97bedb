import { getBackend } from "../backend/index.js";
import { needsGradOf, record } from "../autograd/record.js";
import { broadcastShapes, formatShape } from "../tensor/shape.js";
import { allocate } from "../tensor/storage.js";
import { SHARED_LAYOUT, Tensor } from "../tensor/tensor.js";
import { isAutocastEnabled, lowPrecisionProduct } from "./autocast.js";
import { to } from "./creation.js";
import { sumToShape } from "./reduction.js";
import { assertFloating, assertSameDType, assertTensor, contiguousData, emptyTensor } from "./util.js";
import { expand, reshape, squeeze, transpose, unsqueeze } from "./view.js";

/** Row and column strides of the last two dims, or null when neither is unit (needs a copy). */
function matrixStrides(t: Tensor): [number, number] | null {
  const rs = t.strides[t.ndim - 2];
  const cs = t.strides[t.ndim - 1];
  const rows = t.shape[t.ndim - 2];
  const cols = t.shape[t.ndim - 1];
  if (cs === 1 || cols === 1) return [rows === 1 ? cols : rs, 1];
  if (rs === 1 || rows === 1) return [1, cols === 1 ? rows : cs];
  return null;
}

/** One stride that walks all batch dims in order, or null when they do not collapse. */
function batchStride(t: Tensor, batchDims: number): number | null {
  let stride: number | null = null;
  let expected = 0;
  for (let i = batchDims - 1; i >= 0; i--) {
    if (t.shape[i] === 1) continue;
    if (stride === null) {
      stride = t.strides[i];
      expected = stride * t.shape[i];
    } else if (t.strides[i] === expected || (stride === 0 && t.strides[i] === 0)) {
      expected = t.strides[i] * t.shape[i];
    } else return null;
  }
  return stride ?? 0;
}

/**
 * t broadcast to [...batchShape, rows, cols] as the GEMM reads it: the view, its row and column
 * strides and one batch stride, copied to dense memory where those cannot describe it. A module
 * function rather than a closure in batchedMatmul: under tsx every closure made per call also pays
 * esbuild's `__name` helper (a defineProperty, about 0.5 µs).
 */
function gemmOperand(t: Tensor, batchShape: readonly number[], rows: number, cols: number): { v: Tensor; ms: [number, number]; bs: number } {
  let v = expand(t.detach(), [...batchShape, rows, cols]);
  let ms = matrixStrides(v);
  let bs = batchStride(v, batchShape.length);
  if (!ms || bs === null) {
    v = contiguousData(v);
    ms = [cols, 1];
    bs = rows * cols;
  }
  return { v, ms, bs };
}

/**
 * [..., M, K] @ [..., K, N] with broadcast batch dims; both at least 2-D. `lowp`: on the bfloat16
 * GEMM (operands rounded to bfloat16, float32 sums and output), backward included.
 */
function batchedMatmul(a: Tensor, b: Tensor, lowp = false): Tensor {
  const m = a.shape[a.ndim - 2];
  const k = a.shape[a.ndim - 1];
  const n = b.shape[b.ndim - 1];
  if (b.shape[b.ndim - 2] !== k) {
    throw new RangeError(`matmul: the inner dimensions do not match: ${formatShape(a.shape)} @ ${formatShape(b.shape)} (${k} vs ${b.shape[b.ndim - 2]})`);
  }
  const batchShape = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2), "matmul");
  const batch = batchShape.reduce((x, y) => x * y, 1);
  const pa = gemmOperand(a, batchShape, m, k);
  const pb = gemmOperand(b, batchShape, k, n);
  const out = emptyTensor(lowp ? "float32" : a.dtype, [...batchShape, m, n]);
  const backend = getBackend();
  (lowp ? backend.matmulBf16 : backend.matmul).call(backend, {
    batch,
    m,
    n,
    k,
    a: pa.v.storage.data,
    aOffset: pa.v.offset,
    aRowStride: pa.ms[0],
    aColStride: pa.ms[1],
    aBatchStride: pa.bs,
    b: pb.v.storage.data,
    bOffset: pb.v.offset,
    bRowStride: pb.ms[0],
    bColStride: pb.ms[1],
    bBatchStride: pb.bs,
    out: out.storage.data,
    outOffset: 0,
    alpha: 1,
    beta: 0,
  });
  return record(
    out,
    "MatmulBackward",
    [a, b],
    (g) => [
      a.requiresGrad ? to(sumToShape(batchedMatmul(g, transpose(b, -1, -2), lowp), a.shape), a.dtype) : null,
      b.requiresGrad ? to(sumToShape(batchedMatmul(transpose(a, -1, -2), g, lowp), b.shape), b.dtype) : null,
    ],
    [a, b],
  );
}

/**
 * The frozen [rows, cols] shape and [cols, 1] strides of the last plain product's output, shared by
 * the next output of the same size: a loop of products of one size makes no layout arrays.
 */
let lastLayout: { rows: number; cols: number; shape: readonly number[]; strides: readonly number[] } | null = null;

function matrixLayout(rows: number, cols: number): { shape: readonly number[]; strides: readonly number[] } {
  if (lastLayout === null || lastLayout.rows !== rows || lastLayout.cols !== cols) {
    lastLayout = { rows, cols, shape: Object.freeze([rows, cols]), strides: Object.freeze([cols, 1]) };
  }
  return lastLayout;
}

/**
 * The common call: two float32 or float64 matrices, unit stride along one dim each, nothing to record
 * and no autocast. One GEMM into a fresh [m, n] tensor; null when the general path must run (it
 * builds broadcast views, batch shapes and the backward closure, several µs that a 32×32 product,
 * a few µs of arithmetic, would pay every call).
 */
function plainProduct(a: Tensor, b: Tensor): Tensor | null {
  if (!(a instanceof Tensor) || !(b instanceof Tensor) || a.ndim !== 2 || b.ndim !== 2) return null;
  if (a.dtype !== b.dtype || (a.dtype !== "float32" && a.dtype !== "float64") || lowPrecisionProduct(a, b) || needsGradOf(a, b)) return null;
  const m = a.shape[0];
  const k = a.shape[1];
  const n = b.shape[1];
  if (b.shape[0] !== k) return null;
  const sa = matrixStrides(a);
  const sb = matrixStrides(b);
  if (sa === null || sb === null) return null;
  const layout = matrixLayout(m, n);
  const out = new Tensor(allocate(a.dtype, m * n, false), layout.shape, layout.strides, 0, SHARED_LAYOUT);
  getBackend().matmul({
    batch: 1, m, n, k,
    a: a.storage.data, aOffset: a.offset, aRowStride: sa[0], aColStride: sa[1], aBatchStride: 0,
    b: b.storage.data, bOffset: b.offset, bRowStride: sb[0], bColStride: sb[1], bBatchStride: 0,
    out: out.storage.data, outOffset: 0, alpha: 1, beta: 0,
  });
  return out;
}

/** torch.matmul: dot, matrix-vector, matrix-matrix and batched products with broadcasting. */
export function matmul(a: Tensor, b: Tensor): Tensor {
  const plain = plainProduct(a, b);
  if (plain) return plain;
  assertTensor(a, "matmul");
  assertTensor(b, "matmul", "other");
  const boolDot = a.dtype === "bool" && a.ndim === 1 && b.ndim === 1;
  if ((a.dtype === "bool" || a.dtype === "int32") && a.dtype === b.dtype && (a.numel === 0 || b.numel === 0) && !boolDot) {
    // PyTorch has no bool GEMM but returns empty and zero-sized products without running one (its
    // dot of two bool vectors refuses them whatever their length).
    return to(matmul(to(a, "float64"), to(b, "float64")), a.dtype);
  }
  if (a.dtype === "int32" && b.dtype === "int32") {
    // Integer products, exact in float64 for any sum that fits int32 (PyTorch computes in integers).
    return to(matmul(to(a, "float64"), to(b, "float64")), "int32");
  }
  const lowp = lowPrecisionProduct(a, b);
  if (!lowp) {
    // A bfloat16 operand is fine with another bfloat16 one (or inside autocast): say so first.
    if (a.dtype === "bfloat16" || b.dtype === "bfloat16") assertSameDType(a, b, "matmul");
    assertFloating(a, "matmul");
    assertSameDType(a, b, "matmul");
  }
  if (a.ndim === 0 || b.ndim === 0) {
    throw new RangeError(`matmul: both arguments need at least 1 dimension, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`);
  }
  if (a.ndim === 1 && b.ndim === 1) {
    if (a.shape[0] !== b.shape[0]) throw new RangeError(`matmul: vectors of different lengths: ${formatShape(a.shape)} and ${formatShape(b.shape)}`);
    return lowpResult(reshape(batchedMatmul(unsqueeze(a, 0), unsqueeze(b, 1), lowp), []), a, b, lowp);
  }
  if (a.ndim === 1) return lowpResult(squeeze(batchedMatmul(unsqueeze(a, 0), b, lowp), -2), a, b, lowp);
  if (b.ndim === 1) return lowpResult(squeeze(batchedMatmul(a, unsqueeze(b, 1), lowp), -1), a, b, lowp);
  return lowpResult(batchedMatmul(a, b, lowp), a, b, lowp);
}

/** Outside autocast a product of two bfloat16 tensors is bfloat16, as in PyTorch (rounded once from the float32 sums). */
function lowpResult(out: Tensor, a: Tensor, b: Tensor, lowp: boolean): Tensor {
  return lowp && a.dtype === "bfloat16" && b.dtype === "bfloat16" && !isAutocastEnabled() ? to(out, "bfloat16") : out;
}

/** a @ b on the bfloat16 GEMM whatever the autocast state (both at least 2-D): float32 out, recorded. */
export function matmulBf16(a: Tensor, b: Tensor): Tensor {
  return batchedMatmul(a, b, true);
}

/**
 * The product a backward formula needs, in the precision its forward ran in (`lowp`) whatever the
 * autocast state while backward runs. Both at least 2-D and already checked by the forward.
 */
export function backwardProduct(a: Tensor, b: Tensor, lowp: boolean): Tensor {
  return batchedMatmul(a, b, lowp);
}

/** torch.mm: strictly 2-D. */
export function mm(a: Tensor, b: Tensor): Tensor {
  if (a.ndim !== 2 || b.ndim !== 2) throw new RangeError(`mm: expected 2-D tensors, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`);
  return matmul(a, b);
}

/** torch.bmm: strictly 3-D with equal batch sizes. */
export function bmm(a: Tensor, b: Tensor): Tensor {
  if (a.ndim !== 3 || b.ndim !== 3 || a.shape[0] !== b.shape[0]) {
    throw new RangeError(`bmm: expected 3-D tensors with the same batch size, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`);
  }
  return matmul(a, b);
}
