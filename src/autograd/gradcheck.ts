import type { Tensor } from "../tensor/tensor.js";
import { noGrad } from "./grad_mode.js";
import { grad } from "./functional.js";
import { randn } from "../ops/creation.js";

export interface GradcheckOptions {
  eps?: number;
  atol?: number;
  rtol?: number;
  /** How many random projections of the output gradient to check. */
  projections?: number;
  seedGenerator?: import("../tensor/random.js").Generator;
}

type Fn = (...inputs: Tensor[]) => Tensor | readonly Tensor[];

function outputsOf(fn: Fn, inputs: Tensor[]): Tensor[] {
  const out = fn(...inputs);
  return Array.isArray(out) ? [...out] : [out as Tensor];
}

/**
 * Compares the analytical gradient of fn against central finite differences, in float64.
 * For random output weights v, checks vᵀJ from backward against Σ v·(f(x+h)−f(x−h))/2h for every
 * input element. Throws with the worst mismatch; returns true when all agree.
 */
export function gradcheck(fn: Fn, inputs: Tensor[], options: GradcheckOptions = {}): true {
  const eps = options.eps ?? 1e-6;
  const atol = options.atol ?? 1e-5;
  const rtol = options.rtol ?? 1e-3;
  const differentiable = inputs.filter((t) => t.requiresGrad);
  for (const t of differentiable) {
    if (t.dtype !== "float64") throw new TypeError(`gradcheck: inputs must be float64 for finite differences to be accurate, got ${t.describe()}`);
    if (!t.isContiguous() || !t.isLeaf) throw new TypeError("gradcheck: inputs must be contiguous leaf tensors");
  }
  for (let p = 0; p < (options.projections ?? 2); p++) {
    const outs = outputsOf(fn, inputs);
    const weights = outs.map((o) => randn(o.shape, { dtype: "float64", generator: options.seedGenerator }));
    const analytic = grad(outs, differentiable, weights, { allowUnused: true });
    const project = (): number =>
      noGrad(() => {
        let s = 0;
        outputsOf(fn, inputs).forEach((o, i) => {
          const ov = o.to("float64").contiguous().data();
          const wv = weights[i].data();
          for (let j = 0; j < ov.length; j++) s += ov[j] * wv[j];
        });
        return s;
      });
    differentiable.forEach((t, ti) => {
      const d = t.storage.data;
      const a = analytic[ti] ? analytic[ti]!.to("float64").contiguous().data() : new Float64Array(t.numel);
      for (let j = 0; j < t.numel; j++) {
        const k = t.offset + j;
        const orig = d[k];
        d[k] = orig + eps;
        const plus = project();
        d[k] = orig - eps;
        const minus = project();
        d[k] = orig;
        const numeric = (plus - minus) / (2 * eps);
        if (!(Math.abs(numeric - a[j]) <= atol + rtol * Math.abs(numeric))) {
          throw new Error(
            `gradcheck: the gradient of input ${inputs.indexOf(t)} (${t.describe()}) at element ${j} is ${a[j]} analytically ` +
              `but ${numeric} by finite differences (projection ${p})`,
          );
        }
      }
    });
  }
  return true;
}
