/**
 * Connects layers that must not import each other: the data and checkpoint layers learn the
 * default process group's rank and world size from the distributed layer below them, and
 * nn.SyncBatchNorm its all-reduce. The public
 * entry point imports this module once.
 */
import { setDistributedContextProvider } from "./checkpoint/world.js";
import { defaultWorld } from "./data/distributed_sampler.js";
import { allReduce, barrier } from "./distributed/collectives.js";
import { currentWorld, getRank, getWorldSize, isInitialized } from "./distributed/init.js";
import type { ProcessGroup } from "./distributed/process_group.js";
import { setCrossRankLink } from "./nn/sync_batch_norm.js";

defaultWorld.rank = () => (isInitialized() ? getRank() : undefined);
defaultWorld.worldSize = () => (isInitialized() ? getWorldSize() : undefined);

setDistributedContextProvider(() => {
  if (!isInitialized()) return null;
  const { store, prefix } = currentWorld("checkpoint");
  const key = (k: string) => `${prefix}/checkpoint/${k}`;
  return {
    rank: getRank(),
    worldSize: getWorldSize(),
    barrier: () => barrier(),
    ...(store && {
      announce: (k: string) => store.set(key(k), "1"),
      awaitAnnouncement: (k: string) => store.wait([key(k)]),
    }),
  };
});

setCrossRankLink({
  worldSize: (group) => (isInitialized() ? getWorldSize(group as ProcessGroup | undefined) : undefined),
  allReduceSum: (values, group) => allReduce(values, group ? { group: group as ProcessGroup } : {}),
});
