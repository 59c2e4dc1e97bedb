import type { Shape } from "../tensor/shape.js";

/**
 * For an index smaller than the target off `d`, the flat offset into a contiguous tensor of `shape`
 * of every index element, so the general case runs as a flat indexSelect/indexAdd
 * (gather, scatterAdd) or scatterReduce (scatter). Internal: not re-exported from ops/index.
 */
export function flatOffsets(index: Int32Array, indexShape: Shape, shape: Shape, d: number): Int32Array {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  const out = new Int32Array(index.length);
  const coord = new Array<number>(indexShape.length).fill(0);
  for (let j = 0; j < index.length; j++) {
    let offset = 0;
    for (let i = 0; i < coord.length; i++) offset += (i === d ? index[j] : coord[i]) * strides[i];
    out[j] = offset;
    for (let i = coord.length - 1; i >= 0; i--) {
      if (++coord[i] < indexShape[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}
