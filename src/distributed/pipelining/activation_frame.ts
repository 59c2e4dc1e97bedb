import { narrow, view } from "../../ops/view.js";
import { type DType, itemSize } from "../../tensor/dtype.js";
import { formatShape } from "../../tensor/shape.js";
import type { Tensor } from "../../tensor/tensor.js";

/** Most dimensions an activation may have: its shape travels in a fixed header. */
export const MAX_DIMS = 8;
/**
 * Bytes before an activation's values in its message: [ndim, d0, …, d7] as int32, padded to 64 so
 * that the values after it stay aligned for every dtype.
 */
const HEADER_BYTES = 64;

/**
 * An activation's message: its shape and its values in one buffer, so that it crosses the
 * boundary as one transfer. With a separate header message each activation cost the comm threads
 * two transfers, and the last stage two receives, where a gradient costs one. The receiver posts
 * the frame's receive at the size the micro-batch had the step before (inbox.ts), and reads the
 * shape from the frame once it is in.
 */
export function frameNumel(shape: readonly number[], dtype: DType): number {
  return HEADER_BYTES / itemSize(dtype) + shape.reduce((n, d) => n * d, 1);
}

/** The header's int32 words inside a frame (a 1-D tensor of frameNumel elements). */
function headerOf(frame: Tensor): Int32Array {
  const data = frame.storage.data;
  return new Int32Array(data.buffer, data.byteOffset + frame.offset * itemSize(frame.dtype), MAX_DIMS + 1);
}

export function writeFrameShape(frame: Tensor, shape: readonly number[]): void {
  if (shape.length > MAX_DIMS) throw new Error(`pipeline: activations have at most ${MAX_DIMS} dimensions, got ${formatShape(shape)}`);
  const h = headerOf(frame);
  h[0] = shape.length;
  shape.forEach((d, i) => (h[i + 1] = d));
}

/** The shape a received frame announces; throws when the frame cannot hold it (a corrupt message). */
export function readFrameShape(frame: Tensor): number[] {
  const h = headerOf(frame);
  const ndim = h[0]!;
  if (ndim < 0 || ndim > MAX_DIMS) throw new Error(`pipeline: a received activation's header gives ${ndim} dimensions (0..${MAX_DIMS} expected): the message is not an activation`);
  return Array.from(h.subarray(1, 1 + ndim));
}

/** The values of a frame whose header announces `shape` (a view of the frame's memory). */
export function frameBody(frame: Tensor, shape: readonly number[]): Tensor {
  const n = shape.reduce((a, d) => a * d, 1);
  return view(narrow(frame, 0, HEADER_BYTES / itemSize(frame.dtype), n), [...shape]);
}
