// Shared by the double-backward tests: the first derivative of a function as a function of its
// inputs, so that gradcheck can check the second derivative by finite differences.
import { grad } from "../../src/autograd/index.js";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";

/** d/dx of ⟨f(x), w⟩ built with createGraph, as a function of the inputs; w is drawn once from `gen`. */
export function firstDerivative(f: (...xs: Tensor[]) => Tensor, shapeOf: (...xs: Tensor[]) => readonly number[], gen: rt.Generator) {
  let w: Tensor | null = null;
  // gradcheck evaluates fn under noGrad for its finite differences; a gradient needs a graph.
  return (...xs: Tensor[]): Tensor[] =>
    rt.enableGrad(() => {
      const y = f(...xs);
      w ??= rt.randn([...shapeOf(...xs)], { dtype: "float64", generator: gen });
      const differentiable = xs.filter((x) => x.requiresGrad);
      const gs = grad(y, differentiable, w, { createGraph: true, allowUnused: true });
      // A gradient that does not depend on the inputs (a bias's) has no second derivative to check.
      return gs.filter((g): g is Tensor => g !== null && g.requiresGrad);
    });
}
