import type { Tensor } from "../tensor/tensor.js";
import { gelu, relu, sigmoid, silu, tanh } from "../ops/elementwise.js";
import { logSoftmax, softmax } from "../ops/softmax.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";

/**
 * An activation without arguments. PyTorch's take `inplace=True`; here the result is always a new
 * tensor, so an argument (`new nn.ReLU(true)`) is refused rather than silently meaning something else.
 */
abstract class PlainActivation extends Module {
  constructor(...args: unknown[]) {
    super();
    checkArity(this.constructor.name, args, 0, `new nn.${this.constructor.name}() (ringtorch's activations always return a new tensor; there is no inplace)`);
  }
}

export class ReLU extends PlainActivation {
  override forward(x: Tensor): Tensor {
    return relu(x);
  }
}

type Approximate = "none" | "tanh";

/** GELU, exact (erf) by default or the tanh approximation (torch.nn.GELU): `new GELU("tanh")` or `new GELU({ approximate: "tanh" })`. */
export class GELU extends Module {
  readonly approximate: Approximate;

  constructor(approximate: Approximate | { approximate?: Approximate } = "none") {
    super();
    checkArity("GELU", arguments, 1, 'new nn.GELU({ approximate: "tanh" })');
    if (typeof approximate === "object" && approximate !== null) checkOptions("GELU", approximate, ["approximate"]);
    const a = typeof approximate === "object" && approximate !== null ? (approximate.approximate ?? "none") : approximate;
    if (a !== "none" && a !== "tanh") throw new TypeError(`GELU: approximate must be "none" or "tanh", got ${JSON.stringify(a)}`);
    this.approximate = a;
  }

  override forward(x: Tensor): Tensor {
    return gelu(x, this.approximate);
  }

  override extraRepr(): string {
    return `approximate='${this.approximate}'`;
  }
}

export class Tanh extends PlainActivation {
  override forward(x: Tensor): Tensor {
    return tanh(x);
  }
}

export class Sigmoid extends PlainActivation {
  override forward(x: Tensor): Tensor {
    return sigmoid(x);
  }
}

export class SiLU extends PlainActivation {
  override forward(x: Tensor): Tensor {
    return silu(x);
  }
}

/** The dim of Softmax/LogSoftmax, given as `1` or as PyTorch's keyword `{ dim: 1 }`. */
function dimArgument(where: string, args: IArguments, dim: number | { dim: number }): number {
  checkArity(where, args, 1, `new nn.${where}(dim)`);
  if (typeof dim === "object" && dim !== null) {
    checkOptions(where, dim, ["dim"]);
    dim = dim.dim;
  }
  if (!Number.isInteger(dim)) throw new TypeError(`${where}: expected an integer dim, got ${String(dim)} (PyTorch infers one when left out; here it is required)`);
  return dim;
}

/** Softmax along `dim`. PyTorch infers a dim when none is given (deprecated there); here it is required. */
export class Softmax extends Module {
  readonly dim: number;

  constructor(dim: number | { dim: number }) {
    super();
    this.dim = dimArgument("Softmax", arguments, dim);
  }

  override forward(x: Tensor): Tensor {
    return softmax(x, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

export class LogSoftmax extends Module {
  readonly dim: number;

  constructor(dim: number | { dim: number }) {
    super();
    this.dim = dimArgument("LogSoftmax", arguments, dim);
  }

  override forward(x: Tensor): Tensor {
    return logSoftmax(x, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}
