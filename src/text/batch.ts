import { tensor } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import type { Encoding } from "./encoding.js";

export interface BatchTensors {
  inputIds: Tensor;
  attentionMask: Tensor;
  tokenTypeIds: Tensor;
}

/** Padded encodings as int32 tensors [batch, length] (transformers' return_tensors="pt"). */
export function batchTensors(encodings: readonly Encoding[]): BatchTensors {
  if (encodings.length === 0) throw new RangeError("batchTensors: the batch is empty");
  const length = encodings[0].ids.length;
  encodings.forEach((e, i) => {
    if (e.ids.length !== length) throw new RangeError(`batchTensors: encoding ${i} has ${e.ids.length} tokens but encoding 0 has ${length}; encode with { padding: "longest" } or "maxLength"`);
  });
  const pack = (k: "ids" | "attentionMask" | "typeIds") => {
    const flat = new Int32Array(encodings.length * length);
    encodings.forEach((e, i) => flat.set(e[k], i * length));
    return tensor(flat, { shape: [encodings.length, length] });
  };
  return { inputIds: pack("ids"), attentionMask: pack("attentionMask"), tokenTypeIds: pack("typeIds") };
}
