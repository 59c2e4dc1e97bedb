import { record } from "../../autograd/record.js";
import { noGrad } from "../../autograd/grad_mode.js";
import { cat } from "../../ops/join.js";
import { copyInPlace } from "../../ops/elementwise.js";
import { emptyTensor } from "../../ops/util.js";
import { narrow } from "../../ops/view.js";
import type { Tensor } from "../../tensor/tensor.js";

/**
 * The gather of DataParallel's plain call: the pieces' outputs concatenated along dim 0 into a new
 * tensor, with cat's value and gradient, in two steps, so that the main thread copies its own
 * piece's output (startGather) while the replicas still compute theirs, and after their answers
 * copies only theirs (finishGather). With the loss on the gathered output the gather is part of
 * the serial section the replicas idle through before their backward.
 */

/** The whole batch's output, its first `first.shape[0]` rows written; null where cat() must do it (a scalar output). */
export function startGather(first: Tensor, total: number): Tensor | null {
  if (first.ndim === 0 || first.shape[0]! > total) return null;
  const out = emptyTensor(first.dtype, [total, ...first.shape.slice(1)]);
  copyRows(out, 0, first);
  return out;
}

/**
 * Writes the replicas' outputs after the main thread's rows of `out` and records the gather's
 * graph node. Outputs whose shape or dtype does not continue the first's go through cat(), which
 * promotes or says what does not match.
 */
export function finishGather(out: Tensor | null, first: Tensor, outputs: readonly Tensor[]): Tensor {
  const pieces = [first, ...outputs];
  const sizes: number[] = [];
  let rows = 0;
  for (const t of pieces) {
    if (out === null || !continues(first, t)) return cat(pieces, 0);
    sizes.push(t.shape[0]!);
    rows += t.shape[0]!;
  }
  if (rows !== out!.shape[0]) return cat(pieces, 0);
  let start = first.shape[0]!;
  for (const t of outputs) {
    copyRows(out!, start, t);
    start += t.shape[0]!;
  }
  return record(out!, "DataParallelGatherBackward", pieces, gatherBackward, [], sizes);
}

/** Each piece's gradient: its rows of the output's, as views (cat's backward). */
function gatherBackward(g: Tensor, sizes: number[]): Tensor[] {
  const parts: Tensor[] = [];
  let start = 0;
  for (const size of sizes) {
    parts.push(narrow(g, 0, start, size));
    start += size;
  }
  return parts;
}

function continues(first: Tensor, t: Tensor): boolean {
  if (t.dtype !== first.dtype || t.ndim !== first.ndim) return false;
  for (let j = 1; j < t.ndim; j++) if (t.shape[j] !== first.shape[j]) return false;
  return true;
}

/** Copies `piece` into rows [start, start + piece.shape[0]) of `out`, recording nothing. */
function copyRows(out: Tensor, start: number, piece: Tensor): void {
  noGrad(() => copyInPlace(narrow(out, 0, start, piece.shape[0]!), piece.detach()));
}
