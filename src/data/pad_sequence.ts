import { tensor } from "../ops/creation.js";
import { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";

export interface PadSequenceOptions {
  /** [batch, length] (default true, unlike torch's False: what every collator here wants). */
  batchFirst?: boolean;
  paddingValue?: number;
  paddingSide?: "right" | "left";
  /** Pad to this length instead of the longest (sequences must not be longer). */
  length?: number;
}

/**
 * torch.nn.utils.rnn.pad_sequence for 1-D sequences of token ids (arrays or 1-D int32/float
 * tensors): one [batch, length] tensor, int32 for arrays and int32 tensors.
 */
export function padSequence(sequences: readonly (readonly number[] | Tensor)[], options: PadSequenceOptions = {}): Tensor {
  checkOptions("padSequence", options, ["batchFirst", "paddingValue", "paddingSide", "length"]);
  if (sequences.length === 0) throw new RangeError("padSequence: no sequences to pad");
  const rows = sequences.map((s, i) => {
    if (s instanceof Tensor) {
      if (s.dim() !== 1) throw new RangeError(`padSequence: sequence ${i} has shape [${s.shape.join(", ")}]; only 1-D sequences are supported`);
      return { values: Array.from(s.data() as ArrayLike<number>), float: s.dtype !== "int32" };
    }
    if (!Array.isArray(s)) throw new TypeError(`padSequence: sequence ${i} must be an array of numbers or a 1-D tensor`);
    return { values: s as readonly number[], float: false };
  });
  const longest = Math.max(...rows.map((r) => r.values.length));
  const length = options.length ?? longest;
  if (length < longest) throw new RangeError(`padSequence: length ${length} is shorter than the longest sequence (${longest}); truncate first`);
  const pad = options.paddingValue ?? 0;
  const left = options.paddingSide === "left";
  const float = rows.some((r) => r.float);
  const flat = float ? new Float32Array(rows.length * length) : new Int32Array(rows.length * length);
  rows.forEach(({ values }, b) => {
    const offset = left ? length - values.length : 0;
    for (let j = 0; j < length; j++) {
      const k = j - offset;
      flat[b * length + j] = k >= 0 && k < values.length ? values[k] : pad;
    }
  });
  const t = tensor(flat, { shape: [rows.length, length] });
  return options.batchFirst === false ? t.transpose(0, 1).contiguous() : t;
}
