import { allGather } from "../distributed/gather_scatter.js";
import { allReduceSum } from "../parallel/metrics.js";
import { zeros } from "../ops/creation.js";
import { cat } from "../ops/join.js";
import { indexSelect } from "../ops/indexing.js";
import type { Tensor } from "../tensor/tensor.js";

/**
 * Every rank's rows of an evaluation, back in dataset order, on every rank. The rows come from an
 * evaluation-mode DistributedSampler without shuffling: sample i is row ⌊i/R⌋ of rank i mod R,
 * ranks may hold one row fewer than others, and nothing is duplicated (HF's Trainer pads and
 * then truncates, which drops the wrong rows when the tail is uneven). The all-gather needs equal
 * shapes, so shares are padded with zeros to the longest for the transfer and the padding is
 * never read back.
 */
export function gatherInDatasetOrder(rows: Tensor, rank: number, worldSize: number): Tensor {
  if (worldSize === 1) return rows;
  const counts = allReduceSum(Array.from({ length: worldSize }, (_, r) => (r === rank ? rows.shape[0] : 0)));
  const longest = Math.max(...counts);
  const [, ...rest] = rows.shape;
  const padded = rows.shape[0] === longest ? rows.contiguous() : cat([rows, zeros([longest - rows.shape[0], ...rest], { dtype: rows.dtype })], 0);
  const parts = counts.map(() => zeros([longest, ...rest], { dtype: rows.dtype }));
  allGather(parts, padded);
  const total = counts.reduce((a, b) => a + b, 0);
  const order = Array.from({ length: total }, (_, i) => (i % worldSize) * longest + Math.floor(i / worldSize));
  return indexSelect(cat(parts, 0), 0, order);
}
