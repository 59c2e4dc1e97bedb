import { getBackend } from "../backend/index.js";
import type { ConvGeometry } from "../backend/backend.js";
import { record } from "../autograd/record.js";
import type { Tensor } from "../tensor/tensor.js";
import { sum } from "./reduction.js";
import { contiguousData, emptyTensor } from "./util.js";

/**
 * The three linear maps of a convolution as differentiable ops: the forward, and its two
 * adjoints. Each one's gradient is written with the others (for the pairing ⟨g, conv(x, W)⟩, the
 * derivative in x is convInput(g, W) and in W is convWeight(g, x)), so that gradients of
 * gradients work to any order. Shapes are checked by ops/conv.ts; tensors here are 4-d NCHW.
 */
const dataOf = (t: Tensor) => t.storage.data.subarray(t.offset, t.offset + t.numel);

export function convForward(g: ConvGeometry, x: Tensor, weight: Tensor, bias: Tensor | null): Tensor {
  const xc = contiguousData(x);
  const wc = contiguousData(weight);
  const out = emptyTensor(x.dtype, [g.batch, g.outChannels, g.outHeight, g.outWidth]);
  getBackend().conv2d(g, dataOf(xc), dataOf(wc), bias ? dataOf(contiguousData(bias)) : null, out.storage.data);
  return record(
    out,
    "ConvolutionBackward",
    [x, weight, bias],
    (grad) => [
      x.requiresGrad ? convInput(g, grad, weight) : null,
      weight.requiresGrad ? convWeight(g, grad, x) : null,
      bias?.requiresGrad ? convBias(grad) : null,
    ],
    [x, weight],
  );
}

/** ∂⟨g, conv(x, W)⟩/∂x: the transposed convolution of g by W, shaped like the input. */
export function convInput(g: ConvGeometry, grad: Tensor, weight: Tensor): Tensor {
  const gc = contiguousData(grad);
  const wc = contiguousData(weight);
  const out = emptyTensor(grad.dtype, [g.batch, g.inChannels, g.height, g.width]);
  getBackend().conv2dBackwardInput(g, dataOf(gc), dataOf(wc), out.storage.data);
  return record(
    out,
    "ConvolutionBackwardInput",
    [grad, weight],
    (h) => [grad.requiresGrad ? convForward(g, h, weight, null) : null, weight.requiresGrad ? convWeight(g, grad, h) : null],
    [grad, weight],
  );
}

/** ∂⟨g, conv(x, W)⟩/∂W: the correlation of g with x, shaped like the weight. */
export function convWeight(g: ConvGeometry, grad: Tensor, x: Tensor): Tensor {
  const gc = contiguousData(grad);
  const xc = contiguousData(x);
  const out = emptyTensor(grad.dtype, [g.outChannels, g.inChannels / g.groups, g.kernelH, g.kernelW]);
  getBackend().conv2dBackwardWeight(g, dataOf(gc), dataOf(xc), out.storage.data, null);
  return record(
    out,
    "ConvolutionBackwardWeight",
    [grad, x],
    (h) => [grad.requiresGrad ? convForward(g, x, h, null) : null, x.requiresGrad ? convInput(g, grad, h) : null],
    [grad, x],
  );
}

/** ∂⟨g, conv + b⟩/∂b: g summed over batch and positions. */
function convBias(grad: Tensor): Tensor {
  return sum(grad, [0, 2, 3]);
}
