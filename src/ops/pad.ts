import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { full } from "./creation.js";
import { indexSelect } from "./indexing.js";
import { cat } from "./join.js";
import { assertTensor } from "./util.js";
import { narrow } from "./view.js";
import { hasBFloat16, inFloat32 } from "./bfloat16.js";

export type PadMode = "constant" | "reflect" | "replicate" | "circular";

const MODES: readonly PadMode[] = ["constant", "reflect", "replicate", "circular"];

/**
 * torch.nn.functional.pad: pads the last dims of x. `pad` lists (before, after) pairs starting
 * from the last dim: [left, right] pads the last dim, [left, right, top, bottom] the last two.
 * "constant" fills with `value` (0) and takes negative pads to crop; "reflect" mirrors without
 * repeating the edge, "replicate" repeats the edge, "circular" wraps around. As in PyTorch, the
 * non-constant modes pad 1 to 3 dims of an input with one or two leading (batch, channel) dims.
 * Built from cat and indexSelect, so the gradient comes from theirs.
 */
/** pad itself, for the body of pad, where its parameter of the same name (PyTorch's) hides it. */
const padOp = (...args: Parameters<typeof pad>): Tensor => pad(...args);

export function pad(x: Tensor, pad: readonly number[], mode: PadMode = "constant", value?: number | null): Tensor {
  if (hasBFloat16(x, pad, mode, value)) return inFloat32(padOp, [x, pad, mode, value]);
  assertTensor(x, "pad");
  if (!Array.isArray(pad) || pad.length % 2 !== 0 || pad.some((p) => !Number.isInteger(p))) {
    throw new TypeError(`pad: pad must be an even-length array of integers, got ${JSON.stringify(pad)}`);
  }
  if (!MODES.includes(mode)) throw new TypeError(`pad: mode must be one of ${MODES.map((m) => `"${m}"`).join(", ")}, got ${JSON.stringify(mode)}`);
  const dims = pad.length / 2;
  if (dims > x.ndim) throw new RangeError(`pad: ${pad.length} pad values pad ${dims} dims, but the input has shape ${formatShape(x.shape)}`);
  if (mode === "constant") return padConstant(x, pad, value ?? 0);
  if (value !== undefined && value !== null) throw new TypeError(`pad: mode "${mode}" does not take a value; only "constant" fills`);
  if (dims < 1 || dims > 3 || (x.ndim !== dims + 1 && x.ndim !== dims + 2)) {
    throw new RangeError(
      `pad: mode "${mode}" pads 1 to 3 trailing dims of an input with 1 or 2 more dims; ${pad.length} pad values need a ${dims + 1}-d or ${dims + 2}-d input, got ${formatShape(x.shape)}`,
    );
  }
  if (mode !== "circular" && x.dtype === "bool") throw new TypeError(`pad: mode "${mode}" is not implemented for bool tensors (as in PyTorch); convert with .int()`);
  // PyTorch's reflect and replicate kernels want every dim non-empty except a batch dim.
  if (mode !== "circular" && x.shape.some((s, i) => s === 0 && !(i === 0 && x.ndim === dims + 2))) {
    throw new RangeError(`pad: mode "${mode}" needs a ${dims + 1}-d tensor or a ${dims + 2}-d batch (possibly of size 0) with non-empty other dims, got ${formatShape(x.shape)}`);
  }
  let out = x;
  for (let i = 0; i < dims; i++) {
    const d = x.ndim - 1 - i;
    out = padIndexed(out, d, pad[2 * i], pad[2 * i + 1], mode);
  }
  return out;
}

function padConstant(x: Tensor, pad: readonly number[], value: number): Tensor {
  if (typeof value !== "number") throw new TypeError(`pad: value must be a number, got ${typeof value}`);
  let out = x;
  for (let i = 0; i < pad.length / 2; i++) {
    const d = x.ndim - 1 - i;
    const [before, after] = [pad[2 * i], pad[2 * i + 1]];
    const size = out.shape[d];
    if (size + before + after < 0 || (before < 0 && -before > size) || (after < 0 && -after > size)) {
      throw new RangeError(`pad: padding (${before}, ${after}) of dim ${d} of size ${size} in ${formatShape(x.shape)} leaves a negative size`);
    }
    // Negative pads crop.
    const start = Math.max(0, -before);
    const kept = size - start - Math.max(0, -after);
    if (kept < 0) throw new RangeError(`pad: padding (${before}, ${after}) crops more than dim ${d} of size ${size} holds`);
    if (start > 0 || kept !== size) out = narrow(out, d, start, kept);
    const block = (n: number) => full(out.shape.map((s, j) => (j === d ? n : s)), value, { dtype: out.dtype });
    const parts = [...(before > 0 ? [block(before)] : []), out, ...(after > 0 ? [block(after)] : [])];
    if (parts.length > 1) out = cat(parts, d);
  }
  return out;
}

function padIndexed(x: Tensor, d: number, before: number, after: number, mode: Exclude<PadMode, "constant">): Tensor {
  const size = x.shape[d];
  const where = `dim ${d} of size ${size} in ${formatShape(x.shape)}`;
  if (mode === "reflect" && (before >= size || after >= size)) {
    throw new RangeError(`pad: reflect padding (${before}, ${after}) must be smaller than ${where}`);
  }
  if (mode === "replicate" && size === 0) throw new RangeError(`pad: replicate padding needs a non-empty ${where}`);
  if (mode === "circular" && (before > size || after > size)) {
    throw new RangeError(`pad: circular padding (${before}, ${after}) may wrap around at most once: it must be no larger than ${where}`);
  }
  const length = size + before + after;
  if (length < 0) throw new RangeError(`pad: padding (${before}, ${after}) of ${where} leaves a negative size`);
  const index = new Int32Array(length);
  for (let j = 0; j < length; j++) {
    const p = j - before;
    if (mode === "reflect") index[j] = p < 0 ? -p : p >= size ? 2 * (size - 1) - p : p;
    else if (mode === "replicate") index[j] = Math.min(Math.max(p, 0), size - 1);
    else index[j] = ((p % size) + size) % size;
  }
  return indexSelect(x, d, index);
}
