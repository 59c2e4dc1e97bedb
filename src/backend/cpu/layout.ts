import type { StridedView } from "../backend.js";

// One reused Float64Array carries [ndim, offsets..., shape..., strides...] to a native call; calls
// are synchronous, so one buffer per process is enough.
const scratch = new Float64Array(1 + 3 + 32 * 4);

/** Packs the layout of `views` over `shape`, with `extraOffsets` after the views' offsets. */
export function packLayout(shape: readonly number[], views: readonly StridedView[], extraOffsets: readonly number[] = []): Float64Array {
  const ndim = shape.length;
  let i = 0;
  scratch[i++] = ndim;
  for (const v of views) scratch[i++] = v.offset;
  for (const o of extraOffsets) scratch[i++] = o;
  for (let d = 0; d < ndim; d++) scratch[i++] = shape[d];
  for (const v of views) for (let d = 0; d < ndim; d++) scratch[i++] = v.strides[d];
  return scratch;
}
