import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { empty } from "../ops/creation.js";
import { linear } from "../ops/linear.js";
import { calculateFanInAndFanOut, kaimingUniform_, uniform_ } from "./init.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface LinearOptions {
  bias?: boolean;
  dtype?: DType;
  /** Draws the initial weights from this generator instead of the default one. */
  generator?: Generator;
}

/** y = x·Wᵀ + b (torch.nn.Linear), with PyTorch's initialisation. */
export class Linear extends Module {
  readonly inFeatures: number;
  readonly outFeatures: number;
  weight: Parameter;
  bias: Parameter | null;

  constructor(inFeatures: number, outFeatures: number, options: LinearOptions = {}) {
    super();
    checkArity("Linear", arguments, 3, "new nn.Linear(inFeatures, outFeatures, { bias, dtype, generator })");
    checkOptions("Linear", options, ["bias", "dtype", "generator"]);
    for (const [name, v] of [["inFeatures", inFeatures], ["outFeatures", outFeatures]] as const) {
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`Linear: ${name} must be a non-negative integer, got ${v}`);
    }
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    const dtype = options.dtype ?? "float32";
    this.weight = new Parameter(empty([outFeatures, inFeatures], { dtype }));
    this.bias = options.bias === false ? null : new Parameter(empty([outFeatures], { dtype }));
    this.resetParameters(options.generator);
  }

  /**
   * kaiming_uniform(a=√5) on the weight, which is U(−1/√in, 1/√in), and the same bound for the
   * bias: PyTorch's defaults, so a model trains the same way it would there.
   */
  resetParameters(generator?: Generator): void {
    kaimingUniform_(this.weight, { a: Math.sqrt(5), generator });
    if (this.bias) {
      const [fanIn] = calculateFanInAndFanOut(this.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      uniform_(this.bias, -bound, bound, generator);
    }
  }

  override forward(x: Tensor): Tensor {
    return linear(x, this.weight, this.bias);
  }

  override extraRepr(): string {
    return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, bias=${this.bias !== null}`;
  }
}

/** Returns its input (torch.nn.Identity): a placeholder where a layer is optional. */
export class Identity extends Module {
  /** PyTorch's Identity ignores any arguments; so does this one, as ported code passes some. */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  constructor(..._args: unknown[]) {
    super();
  }

  override forward(x: Tensor): Tensor {
    return x;
  }
}
