/**
 * Crash-safe checkpoints of a whole training state.
 *
 * Order of a save across ranks: (1) with sharded state, every rank writes its rank_<r>.* files and
 * their checksum list, then all meet at a barrier; (2) rank 0 writes the replicated files (model
 * and optimizer tensors in safetensors, the rest in state.json), each to a temporary name, fsynced
 * and renamed; (3) rank 0 writes metadata.json, the manifest, last; (4) a synchronous save ends
 * with a barrier, so no rank runs ahead of a checkpoint that is not yet on disk.
 */
export { save, flush, type SaveOptions } from "./save.js";
export { load, type LoadedCheckpoint } from "./load.js";
export { resume, type ResumePoint, type ResumeTargets } from "./resume.js";
export { latest, listCheckpoints, prune } from "./directory.js";
export { setCheckpointRunId, checkpointRunId } from "./run_id.js";
export { verifyCheckpoint, type Manifest } from "./manifest.js";
export { setDistributedContextProvider, type DistributedContext } from "./world.js";
