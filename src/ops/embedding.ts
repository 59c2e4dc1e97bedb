import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { zeros } from "./creation.js";
import { checkedIndex, indexAddInto, indexSelect } from "./indexing.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";
import { reshape } from "./view.js";
import { checkArity, checkOptions } from "../util/options.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export interface EmbeddingOptions {
  /** Rows looked up at this index get no gradient (negative counts from the end), as in PyTorch. */
  paddingIdx?: number | null;
}

/**
 * torch.nn.functional.embedding(indices, weight): the rows of weight [num, dim] at each index,
 * giving [...indices.shape, dim]. Repeated indices accumulate their gradients.
 */
export function embedding(indices: Tensor, weight: Tensor, options: EmbeddingOptions = {}): Tensor {
  if (hasBFloat16(indices, weight, options)) return inFloat32(embedding, [indices, weight, options]);
  checkArity("embedding", arguments, 3, "embedding(indices, weight, { paddingIdx })");
  checkOptions("embedding", options, ["paddingIdx"]);
  assertTensor(indices, "embedding", "indices");
  assertTensor(weight, "embedding", "weight");
  if (weight.ndim !== 2) throw new RangeError(`embedding: the weight must be 2-D [numEmbeddings, embeddingDim], got ${formatShape(weight.shape)}`);
  const [num, dim] = weight.shape;
  let pad: number | null = options.paddingIdx ?? null;
  if (pad !== null) {
    if (!Number.isInteger(pad) || pad < -num || pad >= num) {
      throw new RangeError(`embedding: paddingIdx ${pad} must be within [${-num}, ${num - 1}] for ${num} embeddings`);
    }
    if (pad < 0) pad += num;
  }
  // A private copy: the backward must not see later in-place changes to the caller's indices.
  const idx = checkedIndex(indices, num, "embedding").slice();
  const w = contiguousData(weight);
  const out = emptyTensor(weight.dtype, [...indices.shape, dim]);
  getBackend().indexSelect(w.storage.data.subarray(w.offset), 1, num, dim, idx, out.storage.data);
  return record(out, "EmbeddingBackward", [weight], (g) => {
    const rows = reshape(g, [idx.length, dim]);
    const index = pad === null ? idx : idx.filter((i) => i !== pad);
    const kept = pad === null ? rows : rowsWhere(rows, idx, (i) => i !== pad);
    return [indexAddInto(zeros([num, dim], { dtype: g.dtype }), 0, index, kept)];
  });
}

/** The rows whose index passes `keep`, through the differentiable indexSelect-by-position. */
function rowsWhere(rows: Tensor, idx: Int32Array, keep: (i: number) => boolean): Tensor {
  const positions: number[] = [];
  idx.forEach((v, j) => {
    if (keep(v)) positions.push(j);
  });
  return indexSelect(rows, 0, positions);
}
