import { allReduceCoalesced, broadcast } from "../distributed/collectives.js";
import { allGatherIntoTensor } from "../distributed/gather_scatter.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import { getRank, getWorldSize, isInitialized } from "../distributed/init.js";
import { empty, tensor } from "../ops/creation.js";
import type { Tensor } from "../tensor/tensor.js";
import type { CommWork, DdpComm } from "./comm.js";

/** DDP's view of a process group (the default group when none is given). */
export function commFor(group?: ProcessGroup): DdpComm {
  if (!group && !isInitialized()) {
    throw new Error(
      "DistributedDataParallel: the default process group is not initialized; call dist.initProcessGroup() first " +
        "(under ringrun it reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment)",
    );
  }
  const opts = group ? { group } : {};
  return {
    rank: group ? group.rank : getRank(),
    worldSize: group ? group.worldSize : getWorldSize(),
    allReduceAverageAsync(tensors: readonly Tensor[], divisor: number): CommWork {
      return allReduceCoalesced(tensors, { ...opts, op: "avg", divisor, async: true });
    },
    allReduceAverage(tensors: readonly Tensor[], divisor: number): void {
      allReduceCoalesced(tensors, { ...opts, op: "avg", divisor });
    },
    // DDP names ranks within its group (root 0, join's active ranks); dist.broadcast takes a global rank, as torch's.
    broadcast(buffer: Tensor, src: number): void {
      broadcast(buffer, group ? group.ranks[src]! : src, opts);
    },
    allGatherInts(value: number): number[] {
      const out = empty([group ? group.worldSize : getWorldSize()], { dtype: "int32" });
      allGatherIntoTensor(out, tensor([value], { dtype: "int32" }), opts);
      return Array.from(out.data());
    },
  };
}
