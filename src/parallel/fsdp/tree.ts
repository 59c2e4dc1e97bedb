import type { Module } from "../../nn/module.js";
import { fsdpStateOf, type FsdpState } from "./fully_shard.js";

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
