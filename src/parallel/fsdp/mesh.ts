import { getRank, getWorldSize, newGroup } from "../../distributed/init.js";
import type { ProcessGroup } from "../../distributed/process_group.js";

/** This rank's groups of a 2-D device mesh: the ranks it shards with, and those holding its replicas. */
export interface HybridGroups {
  shard: ProcessGroup;
  replicate: ProcessGroup;
}

/**
 * The 2-D mesh of HYBRID_SHARD (torch's init_device_mesh(("replicate", "shard"))): ranks are cut
 * into consecutive blocks of `shardSize` (one host each under ringrun, LOCAL_WORLD_SIZE by
 * default), parameters are sharded within a block and replicated across blocks. Every rank must
 * call it, in the same order relative to other newGroup calls: it creates every block's groups.
 */
export function hybridGroups(shardSize = Number(process.env.LOCAL_WORLD_SIZE ?? getWorldSize())): HybridGroups {
  const world = getWorldSize();
  if (!Number.isInteger(shardSize) || shardSize < 1 || world % shardSize !== 0) {
    throw new RangeError(`hybridGroups: the shard size must divide the world size ${world}, got ${shardSize}`);
  }
  const rank = getRank();
  const replicas = world / shardSize;
  let shard: ProcessGroup | null = null;
  let replicate: ProcessGroup | null = null;
  for (let b = 0; b < replicas; b++) {
    const g = newGroup(Array.from({ length: shardSize }, (_, i) => b * shardSize + i));
    if (Math.floor(rank / shardSize) === b) shard = g;
  }
  for (let i = 0; i < shardSize; i++) {
    const g = newGroup(Array.from({ length: replicas }, (_, b) => b * shardSize + i));
    if (rank % shardSize === i) replicate = g;
  }
  return { shard: shard!, replicate: replicate! };
}
