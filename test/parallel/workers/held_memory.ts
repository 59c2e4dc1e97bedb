// What the tensor arena holds for live tensors, read the same way by every worker that checks
// memory against a formula (fsdp_checks.ts, fsdp_offload.ts).
import * as rt from "../../../src/index.js";
import { exposeCollector } from "../../../src/tensor/arena.js";

rt.getBackend(); // the backend, and with it the arena, is set up on first use
const gc = exposeCollector()!;

/** Bytes the arena holds for live tensors once every dead one is collected. */
export function heldBytes(): number {
  rt.memoryPool.clear();
  // `gc()`, not `gc({ type: "major" })`: the latter leaves the array buffers it found dead to a later
  // sweep (src/tensor/arena.ts), so what it read depended on how far the sweeper had got: a loaded
  // machine or another arena budget read 1-3 MB of dead blocks as held.
  gc();
  return rt.memoryPool.stats()!.held;
}
