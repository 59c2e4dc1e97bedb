import { allReduce, broadcast } from "../../distributed/collectives.js";
import { allGatherIntoTensor, reduceScatterTensor } from "../../distributed/gather_scatter.js";
import { currentWorld, getRank, getWorldSize, isInitialized } from "../../distributed/init.js";
import type { ProcessGroup } from "../../distributed/process_group.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { CommWork } from "../comm.js";

/**
 * What FSDP needs from its process groups. Parameters are sharded over the shard group and
 * replicated over the replicate group (HYBRID_SHARD's 2-D mesh; FULL_SHARD has no replicate
 * group, NO_SHARD a shard group of one). Tests wrap it to count FSDP's collectives.
 */
export interface FsdpComm {
  /** This rank's place in the shard group, and the group's size. */
  readonly shardRank: number;
  readonly shardSize: number;
  /** How many replicas of every shard there are (1 without a replicate group). */
  readonly replicaSize: number;
  /** Every rank of the job (what broadcast covers). */
  readonly worldSize: number;
  /** Shard group: `output` (size × input) receives every rank's `input` in rank order; started now (prefetch overlaps it with compute). */
  allGather(output: Tensor, input: Tensor): CommWork;
  /** Shard group: rank i's `output` becomes the average over ranks of block i of `input`; started now. */
  reduceScatter(output: Tensor, input: Tensor): CommWork;
  /** Replicate group: `t` becomes the average over replicas, in place; started now. */
  allReduceReplicas(t: Tensor): CommWork;
  /** Shard group: `t` becomes the sum (or max) over ranks, in place (gradient norms). */
  allReduce(t: Tensor, op: "sum" | "max"): void;
  /** Every rank of the job (both groups): `t` becomes rank `src`'s. */
  broadcast(t: Tensor, src: number): void;
}

const done: CommWork = { wait() {} };

/** One comm per (shard, replicate) pair of groups, so that every unit over them shares its buffers (scratch.ts). */
const made = new WeakMap<ProcessGroup, Map<string, FsdpComm>>();
const ids = new WeakMap<ProcessGroup, number>();
let nextId = 1;
const idOf = (g: ProcessGroup | undefined) => (g === undefined ? 0 : (ids.get(g) ?? (ids.set(g, nextId), nextId++)));

/**
 * FSDP's view of its groups: `shard` (default: every rank; "none": this rank alone, NO_SHARD) and
 * an optional `replicate` group (default with "none": every rank). The same groups give the same
 * object.
 */
export function fsdpCommFor(shard?: ProcessGroup | "none", replicate?: ProcessGroup): FsdpComm {
  if (!isInitialized()) {
    throw new Error(
      "fullyShard: the default process group is not initialized; call dist.initProcessGroup() first " +
        "(under ringrun it reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment)",
    );
  }
  const world = currentWorld("fullyShard").world;
  let byKey = made.get(world);
  if (!byKey) made.set(world, (byKey = new Map()));
  const key = `${shard === "none" ? "none" : idOf(shard)}/${idOf(replicate)}`;
  let comm = byKey.get(key);
  if (!comm) byKey.set(key, (comm = makeComm(shard, replicate)));
  return comm;
}

function makeComm(shard?: ProcessGroup | "none", replicate?: ProcessGroup): FsdpComm {
  if (shard === "none") return { ...makeComm(undefined, replicate), shardRank: 0, shardSize: 1, replicaSize: replicate ? replicate.size : getWorldSize(), allReduceReplicas: (t) => allReduce(t, { ...(replicate ? { group: replicate } : {}), op: "avg", async: true }) };
  const s = shard ? { group: shard } : {};
  const r = replicate ? { group: replicate } : null;
  return {
    shardRank: shard ? shard.rank : getRank(),
    shardSize: shard ? shard.size : getWorldSize(),
    replicaSize: replicate ? replicate.size : 1,
    worldSize: getWorldSize(),
    allGather(output, input) {
      return allGatherIntoTensor(output, input, { ...s, async: true });
    },
    reduceScatter(output, input) {
      return reduceScatterTensor(output, input, { ...s, op: "avg", async: true });
    },
    allReduceReplicas(t) {
      return r && replicate!.size > 1 ? allReduce(t, { ...r, op: "avg", async: true }) : done;
    },
    allReduce(t, op) {
      allReduce(t, { ...s, op });
    },
    broadcast(t, src) {
      broadcast(t, src);
    },
  };
}
