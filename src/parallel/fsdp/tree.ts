import type { Module } from "../../nn/module.js";
import { itemSize } from "../../tensor/dtype.js";
import { fsdpStateOf, type FsdpState } from "./fully_shard.js";
import { scratchFor } from "./scratch.js";

/** Every FSDP state in `module`'s subtree (module included), outermost first; at least one. */
export function statesUnder(module: Module, where: string): FsdpState[] {
  const out: FsdpState[] = [];
  for (const m of module.modules()) {
    const s = fsdpStateOf(m);
    if (s) out.push(s);
  }
  if (out.length === 0) throw new Error(`${where}: ${module.constructor.name} has no fully sharded module; call fullyShard(module) first`);
  return out;
}

/**
 * Turns gradient synchronisation off or on for every unit under `module` (FSDP2's
 * set_requires_gradient_sync): while off, backward leaves the gradients unsharded and accumulating
 * on every rank, and the first backward with it on reduce-scatters their sum.
 */
export function setRequiresGradientSync(module: Module, requiresGradientSync: boolean): void {
  if (typeof requiresGradientSync !== "boolean") throw new TypeError(`setRequiresGradientSync: expected a boolean, got ${typeof requiresGradientSync}`);
  for (const s of statesUnder(module, "setRequiresGradientSync")) s.unit.requiresGradientSync = requiresGradientSync;
}

/** The collectives every unit under `module` has run so far, summed by kind. */
export function collectiveCounts(module: Module): { allGather: number; reduceScatter: number; allReduce: number } {
  const total = { allGather: 0, reduceScatter: 0, allReduce: 0 };
  for (const s of statesUnder(module, "collectiveCounts")) {
    total.allGather += s.unit.counts.allGather;
    total.reduceScatter += s.unit.counts.reduceScatter;
    total.allReduce += s.unit.counts.allReduce;
  }
  return total;
}

/** What FSDP holds for a model, in bytes, from its own accounting (deterministic, unlike RSS). */
export interface FsdpMemoryStats {
  /** This rank's parameter shards (the padded flat shards, or the rows of ZeRO-2's kept parameters). */
  shardBytes: number;
  /** Unsharded parameter memory held now: gathered units, and ZeRO-2's kept parameters. */
  heldBytes: number;
  /** The most unsharded parameter memory held at once since the first forward. */
  peakHeldBytes: number;
  /** The most units freed again within a pass (all but the root under FULL_SHARD) gathered or gathering at once. */
  peakGatheredUnits: number;
  /** Communication buffers: the all-gather outputs and reduce-scatter inputs (one set), bfloat16 wire copies. */
  bufferBytes: number;
}

/** FSDP's memory accounting for `module`'s units (fsdp.memoryStats). */
export function memoryStats(module: Module): FsdpMemoryStats {
  const states = statesUnder(module, "fsdp.memoryStats");
  const out: FsdpMemoryStats = { shardBytes: 0, heldBytes: 0, peakHeldBytes: 0, peakGatheredUnits: 0, bufferBytes: 0 };
  const schedules = new Set<NonNullable<FsdpState["schedule"]>>();
  const comms = new Set<FsdpState["comm"]>();
  for (const s of states) {
    const u = s.unit;
    out.shardBytes += u.sharded ? u.flat?.storage.data.byteLength ?? u.params.reduce((n, p) => n + p.shard.numel * itemSize(p.shard.dtype), 0) : 0;
    out.heldBytes += u.heldBytes;
    const schedule = s.root?.schedule;
    if (schedule) schedules.add(schedule);
    comms.add(s.comm);
  }
  for (const sch of schedules) {
    out.peakHeldBytes += sch.peakHeldBytes;
    out.peakGatheredUnits += sch.peakTransient;
  }
  for (const c of comms) out.bufferBytes += scratchFor(c).bytes();
  return out;
}
