import type { Tensor } from "../tensor/tensor.js";
import { gelu, relu, sigmoid, silu, tanh } from "../ops/elementwise.js";
import { logSoftmax, softmax } from "../ops/softmax.js";
import { Module } from "./module.js";

export class ReLU extends Module {
  override forward(x: Tensor): Tensor {
    return relu(x);
  }
}

/** GELU, exact (erf) by default or the tanh approximation (torch.nn.GELU). */
export class GELU extends Module {
  readonly approximate: "none" | "tanh";

  constructor(approximate: "none" | "tanh" = "none") {
    super();
    this.approximate = approximate;
  }

  override forward(x: Tensor): Tensor {
    return gelu(x, this.approximate);
  }

  override extraRepr(): string {
    return `approximate='${this.approximate}'`;
  }
}

export class Tanh extends Module {
  override forward(x: Tensor): Tensor {
    return tanh(x);
  }
}

export class Sigmoid extends Module {
  override forward(x: Tensor): Tensor {
    return sigmoid(x);
  }
}

export class SiLU extends Module {
  override forward(x: Tensor): Tensor {
    return silu(x);
  }
}

/** Softmax along `dim`. PyTorch infers a dim when none is given (deprecated there); here it is required. */
export class Softmax extends Module {
  readonly dim: number;

  constructor(dim: number) {
    super();
    if (!Number.isInteger(dim)) throw new TypeError(`Softmax: expected an integer dim, got ${dim}`);
    this.dim = dim;
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

  constructor(dim: number) {
    super();
    if (!Number.isInteger(dim)) throw new TypeError(`LogSoftmax: expected an integer dim, got ${dim}`);
    this.dim = dim;
  }

  override forward(x: Tensor): Tensor {
    return logSoftmax(x, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}
