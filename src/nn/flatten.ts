import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { flatten, reshape } from "../ops/view.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";

/** Flattens dims startDim..endDim into one (torch.nn.Flatten; defaults 1 and -1 keep the batch dim). */
export class Flatten extends Module {
  readonly startDim: number;
  readonly endDim: number;

  constructor(options: { startDim?: number; endDim?: number } = {}) {
    super();
    checkArity("Flatten", arguments, 1, "new nn.Flatten({ startDim, endDim })");
    checkOptions("Flatten", options, ["startDim", "endDim"]);
    this.startDim = options.startDim ?? 1;
    this.endDim = options.endDim ?? -1;
    for (const [name, v] of [["startDim", this.startDim], ["endDim", this.endDim]] as const) {
      if (!Number.isInteger(v)) throw new TypeError(`Flatten: ${name} must be an integer, got ${String(v)}`);
    }
  }

  override forward(x: Tensor): Tensor {
    return flatten(x, this.startDim, this.endDim);
  }

  override extraRepr(): string {
    return `start_dim=${this.startDim}, end_dim=${this.endDim}`;
  }
}

/** Expands dim into unflattenedSize (torch.nn.Unflatten); one entry may be -1. */
export class Unflatten extends Module {
  readonly dim: number;
  readonly unflattenedSize: readonly number[];

  constructor(dim: number, unflattenedSize: readonly number[]) {
    super();
    checkArity("Unflatten", arguments, 2, "new nn.Unflatten(dim, [sizes])");
    if (!Number.isInteger(dim)) throw new TypeError(`Unflatten: dim must be an integer, got ${String(dim)}`);
    if (!Array.isArray(unflattenedSize) || unflattenedSize.length === 0 || unflattenedSize.some((s) => !Number.isInteger(s) || (s < 0 && s !== -1))) {
      throw new TypeError(`Unflatten: unflattenedSize must be a non-empty array of sizes (one may be -1), got ${JSON.stringify(unflattenedSize)}`);
    }
    this.dim = dim;
    this.unflattenedSize = [...unflattenedSize];
  }

  override forward(x: Tensor): Tensor {
    const d = this.dim < 0 ? this.dim + x.ndim : this.dim;
    if (d < 0 || d >= x.ndim) throw new RangeError(`Unflatten: dim ${this.dim} is out of range for an input of shape ${formatShape(x.shape)}`);
    const shape = [...x.shape.slice(0, d), ...this.unflattenedSize, ...x.shape.slice(d + 1)];
    return reshape(x, shape);
  }

  override extraRepr(): string {
    return `dim=${this.dim}, unflattened_size=(${this.unflattenedSize.join(", ")})`;
  }
}
