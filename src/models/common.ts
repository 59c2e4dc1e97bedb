import { noGrad } from "../autograd/grad_mode.js";
import { gelu, relu, silu, tanh } from "../ops/elementwise.js";
import type { DType } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { normal_, zeros_, ones_ } from "../nn/init.js";
import type { Module } from "../nn/module.js";
import { Linear } from "../nn/linear.js";
import { Embedding } from "../nn/embedding.js";
import { LayerNorm } from "../nn/layer_norm.js";
import type { Generator } from "../tensor/random.js";

/** Hugging Face's ACT2FN names → the op. */
export function activation(name: string, where: string): (x: Tensor) => Tensor {
  switch (name) {
    case "gelu":
      return (x) => gelu(x);
    case "gelu_new":
    case "gelu_pytorch_tanh":
    case "gelu_fast":
      return (x) => gelu(x, "tanh");
    case "relu":
      return relu;
    case "silu":
    case "swish":
      return silu;
    case "tanh":
      return tanh;
    default:
      throw new RangeError(`${where}: unsupported activation "${name}" (gelu, gelu_new, gelu_pytorch_tanh, relu, silu, tanh)`);
  }
}

/** The most negative finite value of a dtype: HF's mask fill, which never leaves a row all -inf. */
export function maskMin(dtype: DType): number {
  return dtype === "float64" ? -Number.MAX_VALUE : -3.4028234663852886e38;
}

/** HF's _init_weights: N(0, std) for Linear and Embedding weights, zero biases, unit LayerNorms. */
export function initWeights(root: Module, std: number, generator?: Generator): void {
  for (const m of root.modules()) {
    if (m instanceof Linear) {
      normal_(m.weight, 0, std, generator);
      if (m.bias) zeros_(m.bias);
    } else if (m instanceof Embedding) {
      normal_(m.weight, 0, std, generator);
      if (m.paddingIdx !== null) noGrad(() => m.weight.select(0, m.paddingIdx!).fill_(0));
    } else if (m instanceof LayerNorm) {
      if (m.weight) ones_(m.weight);
      if (m.bias) zeros_(m.bias);
    }
  }
}
