/**
 * Connects layers that must not import each other: the data and checkpoint layers learn the
 * default process group's rank and world size from the distributed layer below them. The public
 * entry point imports this module once.
 */
import { setDistributedContextProvider } from "./checkpoint/world.js";
import { defaultWorld } from "./data/distributed_sampler.js";
import { barrier } from "./distributed/collectives.js";
import { getRank, getWorldSize, isInitialized } from "./distributed/init.js";

defaultWorld.rank = () => (isInitialized() ? getRank() : undefined);
defaultWorld.worldSize = () => (isInitialized() ? getWorldSize() : undefined);

setDistributedContextProvider(() => (isInitialized() ? { rank: getRank(), worldSize: getWorldSize(), barrier: () => barrier() } : null));
