import type { Tensor } from "../tensor/tensor.js";
import { isGradEnabled } from "./grad_mode.js";
import { AccumulateGrad, Node, type BackwardFn } from "./node.js";

interface AutogradMeta {
  accumulator?: AccumulateGrad;
  retainsGrad?: boolean;
}

export function metaOf(t: Tensor): AutogradMeta {
  return ((t.autogradMeta as AutogradMeta | null) ??= {});
}

/** The node that receives t's gradient: its gradFn, or (for a leaf that requires grad) its accumulator. */
export function gradEdge(t: Tensor): Node | null {
  if (t.gradFn) return t.gradFn as Node;
  if (!t.requiresGrad) return null;
  const meta = metaOf(t);
  return (meta.accumulator ??= new AccumulateGrad(t));
}

/** True when an op over these inputs must be recorded. */
export function needsGrad(inputs: readonly (Tensor | null | undefined)[]): boolean {
  if (!isGradEnabled()) return false;
  for (const t of inputs) if (t?.requiresGrad) return true;
  return false;
}

/**
 * needsGrad for one or two inputs without building an array: ops on the hot path test this before
 * making their backward closure, so that a call outside autograd allocates nothing for it.
 */
export function needsGradOf(a: Tensor, b?: Tensor): boolean {
  return (a.requiresGrad || (b !== undefined && b.requiresGrad)) && isGradEnabled();
}

/**
 * Attaches a graph node to `out` when grad mode is on and an input requires grad.
 * `backward` receives d(loss)/d(out) (and `ctx`) and returns one gradient (or null) per input, in
 * order; it should capture (or find in `ctx`) only what the formula needs, and list in `saved` the
 * tensors whose in-place modification would make the gradient wrong. Hot ops pass a module-level
 * function and a `ctx` rather than a closure (see BackwardFn).
 */
export function record<C>(
  out: Tensor,
  name: string,
  inputs: readonly (Tensor | null | undefined)[],
  backward: BackwardFn<C>,
  saved: readonly Tensor[] = [],
  ctx?: C,
): Tensor {
  if (!needsGrad(inputs)) return out;
  for (const t of saved) {
    if (t.storage.inference) {
      throw new Error(`${name}: an inference tensor (${t.describe()}, made under inferenceMode) cannot be saved for backward, as in PyTorch; clone() it outside inferenceMode to get a normal tensor`);
    }
  }
  const next: (Node | null)[] = [];
  for (const t of inputs) next.push(t ? gradEdge(t) : null);
  out.gradFn = new Node(name, next, backward as BackwardFn<never>, saved, ctx);
  return out;
}
