import type { ReduceOp, TypedArray } from "../backend.js";

/** True when `candidate` should replace `best` as the running max (or min): NaN wins and stays. */
function beats(op: "max" | "min", candidate: number, best: number): boolean {
  if (Number.isNaN(best)) return false;
  if (Number.isNaN(candidate)) return true;
  return op === "max" ? candidate > best : candidate < best;
}

export function reduce(
  op: ReduceOp,
  x: TypedArray,
  xOffset: number,
  outer: number,
  size: number,
  inner: number,
  out: TypedArray,
  indices: Int32Array | null,
): void {
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j: number): number => x[xOffset + (o * size + j) * inner + i];
      const dst = o * inner + i;
      if (op === "sum" || op === "prod") {
        // Accumulate in float64 whatever the dtype: the oracle should be the more exact side.
        let acc = op === "sum" ? 0 : 1;
        for (let j = 0; j < size; j++) acc = op === "sum" ? acc + at(j) : acc * at(j);
        out[dst] = acc;
        continue;
      }
      let best = at(0);
      let bestIndex = 0;
      for (let j = 1; j < size; j++) {
        if (beats(op, at(j), best)) {
          best = at(j);
          bestIndex = j;
        }
      }
      out[dst] = best;
      if (indices) indices[dst] = bestIndex;
    }
  }
}

export function sumSquares(x: TypedArray, xOffset: number, n: number): number {
  let acc = 0;
  for (let i = 0; i < n; i++) acc += x[xOffset + i] * x[xOffset + i];
  return acc;
}
