import type { Tensor } from "../tensor/tensor.js";
import { runBackward, type BackwardOptions } from "./engine.js";
import { gradEdge } from "./record.js";
import { checkOptions } from "../util/options.js";

/** Accumulates d(sum of tensors·grads)/d(leaf) into every leaf's .grad (torch.autograd.backward). */
export function backward(
  tensors: Tensor | readonly Tensor[],
  grads?: Tensor | readonly (Tensor | null)[] | null,
  options: BackwardOptions = {},
): void {
  checkOptions("autograd.backward", options, ["retainGraph", "createGraph"]);
  const outs = Array.isArray(tensors) ? tensors : [tensors as Tensor];
  const gs = grads == null ? [] : Array.isArray(grads) ? grads : [grads as Tensor];
  runBackward(outs, gs, options);
}

export interface GradOptions extends BackwardOptions {
  /** Return null for inputs the outputs do not depend on, instead of throwing. */
  allowUnused?: boolean;
}

/** The gradients of outputs with respect to inputs, without touching any .grad (torch.autograd.grad). */
export function grad(
  outputs: Tensor | readonly Tensor[],
  inputs: Tensor | readonly Tensor[],
  gradOutputs?: Tensor | readonly (Tensor | null)[] | null,
  options: GradOptions = {},
): (Tensor | null)[] {
  checkOptions("autograd.grad", options, ["retainGraph", "createGraph", "allowUnused"]);
  const outs = Array.isArray(outputs) ? outputs : [outputs as Tensor];
  const ins = Array.isArray(inputs) ? inputs : [inputs as Tensor];
  const gs = gradOutputs == null ? [] : Array.isArray(gradOutputs) ? gradOutputs : [gradOutputs as Tensor];
  const nodes = ins.map((t, i) => {
    const node = gradEdge(t);
    if (!node) throw new Error(`autograd.grad: input ${i} (${t.describe()}) does not require grad`);
    return node;
  });
  const captured = runBackward(outs, gs, { ...options, capture: nodes });
  return nodes.map((node, i) => {
    const g = captured.get(node) ?? null;
    if (!g && !options.allowUnused) {
      throw new Error(`autograd.grad: input ${i} (${ins[i].describe()}) was not used to compute the outputs; pass { allowUnused: true } to get null for it`);
    }
    return g;
  });
}
