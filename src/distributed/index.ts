/**
 * ringtorch.distributed: process groups and collectives, in torch.distributed's shape
 * (camelCase). `import { dist } from "ringtorch"`, then `await dist.initProcessGroup()`.
 */
export { ReduceOp, type ReduceOpName } from "./reduce_op.js";
export { Work, DistributedError } from "./work.js";
export { ProcessGroup } from "./process_group.js";
export type { CollectiveOptions, ReduceOptions } from "./options.js";
export type { CommTensor } from "./tensor_ref.js";
export {
  initProcessGroup,
  destroyProcessGroup,
  isInitialized,
  isAvailable,
  getBackend,
  getRank,
  getWorldSize,
  newGroup,
  getProcessGroupRanks,
  getGlobalRank,
  getGroupRank,
  getTransports,
  type InitOptions,
} from "./init.js";
export { allReduce, allReduceCoalesced, broadcast, reduce, barrier } from "./collectives.js";
export { allGather, allGatherIntoTensor, reduceScatter, reduceScatterTensor, scatter, gather } from "./gather_scatter.js";
export { allToAll, allToAllSingle, type AllToAllSingleOptions } from "./all_to_all.js";
export { send, recv, isend, irecv, batchIsendIrecv, type P2POp, type P2POptions } from "./point_to_point.js";
export type { Store } from "./store/store.js";
export { StoreTimeoutError } from "./store/store.js";
export { TCPStore, TCPStoreServer, StoreAuthError } from "./store/tcp_store.js";
export { HashStore } from "./store/hash_store.js";
export { PrefixStore } from "./store/prefix_store.js";
export * as nn from "./nn/index.js";
export * as pipelining from "./pipelining/index.js";
