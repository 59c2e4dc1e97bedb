import { noGrad } from "../autograd/grad_mode.js";
import { getRank, getWorldSize, isInitialized } from "../distributed/init.js";
import { broadcast } from "../distributed/collectives.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import type { Optimizer } from "../optim/optimizer.js";
import { itemSize } from "../tensor/dtype.js";
import { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import { broadcastCoalesced, type Broadcaster } from "./broadcast_coalesced.js";

/** Parameters of at least this many bytes are broadcast in place rather than through a coalesced copy. */
const IN_PLACE_BYTES = 64 * 1024;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type OptimizerClass = new (params: Tensor[], options: any) => Optimizer<{ lr: number }>;

export interface ZeroRedundancyOptimizerOptions {
  /** The optimizer each rank runs on its partition (optim.AdamW, optim.SGD, …). */
  optimizerClass: OptimizerClass;
  /** The group the state is partitioned over (default: every rank). */
  processGroup?: ProcessGroup;
  /** Every other key goes to optimizerClass as its options (lr, weightDecay, momentum, …). */
  [option: string]: unknown;
}

/**
 * ZeRO stage 1 for any optimizer (torch.distributed.optim.ZeroRedundancyOptimizer): each rank
 * keeps optimizer state for its partition of the parameters only (assigned greedily, largest
 * first, to the rank holding the fewest elements), steps that partition with `optimizerClass`'s
 * own kernels, then every partition is broadcast from its owner (one collective per rank).
 * Gradients stay whole: use it beside DDP, which has averaged them. Optimizer state per rank
 * falls from 8Ψ to about 8Ψ/N bytes for Adam.
 */
export class ZeroRedundancyOptimizer {
  readonly localOptimizer: Optimizer<{ lr: number }> | null;
  /** The parameters each rank owns, by rank. */
  readonly partitions: Tensor[][];
  private readonly comm: Broadcaster;

  constructor(params: Iterable<Tensor>, options: ZeroRedundancyOptimizerOptions) {
    const where = "ZeroRedundancyOptimizer";
    checkArity(where, arguments, 2, "new ZeroRedundancyOptimizer(model.parameters(), { optimizerClass: optim.AdamW, lr, … })");
    if (!options || typeof options.optimizerClass !== "function") throw new TypeError(`${where}: options.optimizerClass must be an optimizer class such as optim.AdamW`);
    const { optimizerClass, processGroup, ...optimizerOptions } = options;
    checkOptions(where, { optimizerClass, processGroup }, ["optimizerClass", "processGroup"]);
    const list = [...params];
    if (list.length === 0 || list.some((p) => !(p instanceof Tensor))) throw new TypeError(`${where}: expected a non-empty list of parameters (model.parameters())`);
    if (!processGroup && !isInitialized()) throw new Error(`${where}: the default process group is not initialized; call dist.initProcessGroup() first`);
    const size = processGroup ? processGroup.size : getWorldSize();
    const rank = processGroup ? processGroup.rank : getRank();
    const group = processGroup;
    this.comm = { worldSize: size, broadcast: (t, src) => broadcast(t, group ? group.ranks[src] : src, group ? { group } : {}) };
    this.partitions = partition(list, size);
    const mine = this.partitions[rank];
    this.localOptimizer = mine.length > 0 ? new optimizerClass(mine, optimizerOptions) : null;
  }

  /**
   * Steps this rank's partition, then brings every rank's updated partition to every rank. Large
   * parameters are broadcast in place, one collective each: a coalesced copy would be a fresh
   * buffer of the partition's size every step, which the comm worker keeps until its own
   * collections (memory above the ZeRO formula). Small ones still travel together.
   */
  step(): void {
    this.localOptimizer?.step();
    this.partitions.forEach((owned, r) => {
      const alone = owned.filter((p) => p.numel * itemSize(p.dtype) >= IN_PLACE_BYTES && p.isContiguous());
      noGrad(() => {
        for (const p of alone) this.comm.broadcast(p.detach(), r);
      });
      broadcastCoalesced(this.comm, alone.length === 0 ? owned : owned.filter((p) => !alone.includes(p)), r);
    });
  }

  /** Clears the gradients of every parameter (all of them: gradients are not partitioned). */
  zeroGrad(setToNone = true): void {
    for (const p of this.partitions.flat()) {
      if (!p.grad) continue;
      if (setToNone) p.grad = null;
      else noGrad(() => p.grad!.zero_());
    }
  }
}

/** Greedy by size, largest first, each to the rank with the fewest elements so far (ties: lowest rank). */
function partition(params: Tensor[], size: number): Tensor[][] {
  const parts: Tensor[][] = Array.from({ length: size }, () => []);
  const load = new Array<number>(size).fill(0);
  const order = params.map((p, i) => i).sort((a, b) => params[b].numel - params[a].numel || a - b);
  for (const i of order) {
    const r = load.indexOf(Math.min(...load));
    parts[r].push(params[i]);
    load[r] += params[i].numel;
  }
  // Registration order within a partition, as the parameters were given.
  return parts.map((part) => part.sort((a, b) => params.indexOf(a) - params.indexOf(b)));
}
