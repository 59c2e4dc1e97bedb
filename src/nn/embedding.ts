import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { noGrad } from "../autograd/grad_mode.js";
import { empty } from "../ops/creation.js";
import { embedding } from "../ops/embedding.js";
import { normal_ } from "./init.js";
import { checkArity, checkOptions } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

export interface EmbeddingOptions {
  /** This row starts at zero and receives no gradient (negative counts from the end). */
  paddingIdx?: number | null;
  dtype?: DType;
  generator?: Generator;
}

/** A lookup table of numEmbeddings vectors (torch.nn.Embedding), initialised from N(0, 1). */
export class Embedding extends Module {
  readonly numEmbeddings: number;
  readonly embeddingDim: number;
  readonly paddingIdx: number | null;
  weight: Parameter;

  constructor(numEmbeddings: number, embeddingDim: number, options: EmbeddingOptions = {}) {
    super();
    checkArity("Embedding", arguments, 3, "new nn.Embedding(numEmbeddings, embeddingDim, { paddingIdx, dtype, generator })");
    checkOptions("Embedding", options, ["paddingIdx", "dtype", "generator"]);
    if (!Number.isInteger(numEmbeddings) || numEmbeddings < 1 || !Number.isInteger(embeddingDim) || embeddingDim < 0) {
      throw new RangeError(`Embedding: expected a positive integer numEmbeddings and a non-negative embeddingDim, got ${numEmbeddings} and ${embeddingDim}`);
    }
    let pad = options.paddingIdx ?? null;
    if (pad !== null) {
      if (!Number.isInteger(pad) || pad < -numEmbeddings || pad >= numEmbeddings) {
        throw new RangeError(`Embedding: paddingIdx must be within [${-numEmbeddings}, ${numEmbeddings - 1}], got ${pad}`);
      }
      if (pad < 0) pad += numEmbeddings;
    }
    this.numEmbeddings = numEmbeddings;
    this.embeddingDim = embeddingDim;
    this.paddingIdx = pad;
    this.weight = new Parameter(empty([numEmbeddings, embeddingDim], { dtype: options.dtype ?? "float32" }));
    this.resetParameters(options.generator);
  }

  resetParameters(generator?: Generator): void {
    normal_(this.weight, 0, 1, generator);
    if (this.paddingIdx !== null) {
      const pad = this.paddingIdx;
      noGrad(() => this.weight.select(0, pad).fill_(0));
    }
  }

  /** An Embedding holding a copy of `weights` [num, dim] (torch's from_pretrained; frozen by default). */
  static fromPretrained(weights: Tensor, options: { freeze?: boolean; paddingIdx?: number | null } = {}): Embedding {
    checkArity("Embedding.fromPretrained", arguments, 2, "nn.Embedding.fromPretrained(weights, { freeze, paddingIdx })");
    checkOptions("Embedding.fromPretrained", options, ["freeze", "paddingIdx"]);
    if (weights.ndim !== 2) throw new RangeError(`Embedding.fromPretrained: expected a 2-D [num, dim] tensor, got ${weights.describe()}`);
    const e = new Embedding(weights.shape[0], weights.shape[1], { paddingIdx: options.paddingIdx, dtype: weights.dtype });
    noGrad(() => e.weight.copy_(weights));
    e.weight.requiresGrad = !(options.freeze ?? true);
    return e;
  }

  override forward(indices: Tensor): Tensor {
    return embedding(indices, this.weight, { paddingIdx: this.paddingIdx });
  }

  override extraRepr(): string {
    return `${this.numEmbeddings}, ${this.embeddingDim}${this.paddingIdx !== null ? `, padding_idx=${this.paddingIdx}` : ""}`;
  }
}
