import { queueCallback } from "../../autograd/engine.js";
import { isGradEnabled } from "../../autograd/grad_mode.js";
import { Module } from "../../nn/module.js";
import { Parameter, replaceData } from "../../nn/parameter.js";
import { clone, zeros } from "../../ops/creation.js";
import type { ProcessGroup } from "../../distributed/process_group.js";
import { Tensor } from "../../tensor/tensor.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { type FsdpComm, fsdpCommFor } from "./comm.js";
import { ShardLayout } from "./layout.js";
import { type MixedPrecisionPolicy, resolvePolicy } from "./mixed_precision.js";
import { type OffloadPolicy, resolveOffload } from "./offload.js";
import { FsdpParam, type ShardHome } from "./param.js";
import { setOffloadHome } from "../../tensor/mapped.js";
import { GatherSchedule, type PrefetchOptions } from "./prefetch.js";
import { broadcastCoalesced } from "../broadcast_coalesced.js";
import { scratchFor } from "./scratch.js";
import { FsdpUnit } from "./unit.js";

export interface FullyShardOptions {
  /** Free the gathered parameters after forward and gather them again for backward (ZeRO-3). Default true; the root unit keeps them (backward needs them at once). */
  reshardAfterForward?: boolean;
  /** The group parameters are sharded over (default: every rank), or "none" to keep them whole (NO_SHARD). */
  processGroup?: ProcessGroup | "none";
  /** A group over which every shard is replicated and gradients averaged (HYBRID_SHARD's other mesh dim). */
  replicateGroup?: ProcessGroup;
  mixedPrecision?: MixedPrecisionPolicy;
  /** Copy rank 0's parameters and buffers to every rank before sharding. Default false, as in FSDP2. */
  syncModuleStates?: boolean;
  /**
   * Free the gathered parameters once the unit's backward is done. Default true. False keeps them
   * allocated between steps, this rank's shard a view of its own rows of them (ZeRO-2's memory:
   * parameters whole, gradients and optimizer state sharded); needs reshardAfterForward false and
   * no lowered paramDtype (the rounded copy could not be the master weights).
   */
  reshardAfterBackward?: boolean;
  /** Start the next unit's all-gather before this unit's forward runs (read on the root). Default true. */
  forwardPrefetch?: boolean;
  /** Start the next unit's all-gather before this unit's backward runs (read on the root). Default true. */
  backwardPrefetch?: boolean;
  /** The most units, freed again within a pass, that may be gathered or gathering at once (read on the root). Default 2: the current one and the prefetched one. */
  limitAllGathers?: number;
  /** Keep this rank's parameter shards, gradient shards and optimizer state in a memory-mapped file (see OffloadPolicy). */
  offload?: OffloadPolicy;
  /** Replaces the process groups (tests count FSDP's collectives through it). */
  comm?: FsdpComm;
}

const OPTIONS = [
  "reshardAfterForward",
  "reshardAfterBackward",
  "forwardPrefetch",
  "backwardPrefetch",
  "limitAllGathers",
  "processGroup",
  "replicateGroup",
  "mixedPrecision",
  "syncModuleStates",
  "offload",
  "comm",
];

/** The FSDP state of a module fullyShard was applied to. */
export class FsdpState {
  root: FsdpState | null = null;
  /** Set on the root: every state of its tree, inner units first. */
  tree: FsdpState[] = [];
  /** Set on the root: when each unit of the tree is gathered. */
  schedule: GatherSchedule | null = null;
  private backwardQueued = false;

  constructor(
    readonly module: Module,
    readonly unit: FsdpUnit,
    readonly comm: FsdpComm,
    private readonly prefetch: PrefetchOptions,
  ) {}

  get isRoot(): boolean {
    return this.root === this;
  }

  preForward(): void {
    if (activeRoot === null) {
      if (this.root === null) this.becomeRoot();
      activeRoot = this.root;
      // A forward whose backward never ran (grad on, no backward) left units gathered; an
      // optimizer step may have changed their shards since, so each gathers afresh.
      if (this.root === this) {
        for (const s of this.tree) {
          s.unit.resetBackward();
          s.unit.reshard();
        }
        this.schedule!.beginForward();
      }
    }
    const schedule = this.root?.schedule;
    if (schedule) schedule.beforeForward(this.unit);
    else this.unit.unshard("forward");
    this.unit.installUnsharded();
  }

  postForward(output: unknown): void {
    this.unit.installShards();
    const grad = isGradEnabled();
    if (!grad || (this.unit.options.reshardAfterForward && !this.isRoot)) this.unit.reshard();
    this.root?.schedule?.afterForward(this.unit);
    if (activeRoot === this) {
      activeRoot = null;
      // A forward prefetch this forward did not use (the model ran another path than the last
      // time) is finished and dropped, rather than held until the next forward.
      for (const s of this.tree) if (s.unit.isGathering) s.unit.reshard();
    }
    if (grad) for (const t of tensorsIn(output)) if (t.gradFn) t.registerHook(() => this.preBackward());
  }

  private preBackward(): void {
    this.root?.queueBackwardEnd();
    const schedule = this.root?.schedule;
    if (schedule) schedule.beforeBackward(this.unit);
    else this.unit.unshard("backward");
  }

  queueBackwardEnd(): void {
    if (this.backwardQueued) return;
    this.backwardQueued = true;
    queueCallback(() => this.finishBackward());
  }

  /** After the backward pass: every unit's reduction is launched and waited for, and every unit resharded. */
  private finishBackward(): void {
    this.backwardQueued = false;
    try {
      for (const s of this.tree) s.unit.launchReduce();
      for (const s of this.tree) s.unit.finishReduce();
      // Every reduction has landed; the comm's scratch (shared by every model over the group) must
      // not keep the last one, whose closure holds this model alive after the caller dropped it.
      scratchFor(this.comm).settle();
    } finally {
      for (const s of this.tree) {
        s.unit.reshard();
        s.unit.resetBackward();
      }
      this.schedule?.endBackward();
    }
  }

  /** The first unit to run forward with no FSDP forward around it roots every unit below it. */
  private becomeRoot(): void {
    this.tree = [];
    for (const [path, m] of this.module.namedModules()) {
      const s = states.get(m);
      if (!s || (s.root !== null && s.root !== s)) continue;
      s.unit.rename(`${path || "(root)"} (${m.constructor.name})`);
      this.tree.push(s);
    }
    this.tree.reverse();
    for (const s of this.tree) {
      s.root = this;
      s.unit.onGradReadyHook = () => this.queueBackwardEnd();
    }
    this.unit.isRoot = true;
    this.schedule = new GatherSchedule(
      this.tree.map((s) => s.unit),
      this.prefetch,
    );
  }
}

let activeRoot: FsdpState | null = null;
let nextUnitIndex = 0;
const states = new WeakMap<Module, FsdpState>();
/** Every parameter FSDP manages (both its unsharded and its shard object) → the unit's name. */
const managed = new WeakMap<Tensor, string>();

/** The FSDP state of a module fullyShard was applied to, or null. */
export function fsdpStateOf(module: Module): FsdpState | null {
  return states.get(module) ?? null;
}

/**
 * Shards `module`'s parameters across ranks and makes it one FSDP unit (torch's FSDP2
 * `fully_shard`). Apply it to submodules first (each Transformer block), then to the root: each
 * call takes the parameters that no inner call took. Every parameter is cut on dim 0 into equal,
 * zero-padded chunks; `module.parameters()` then returns this rank's shards, for the optimizer.
 * Before the module's forward its parameters are all-gathered (one collective per unit), after it
 * freed again (reshardAfterForward), gathered again for backward, and after backward the gradients
 * are reduce-scattered (one collective per unit) into the shards' `.grad`, averaged over ranks.
 * Returns the module.
 */
export function fullyShard<M extends Module>(module: M, options: FullyShardOptions = {}): M {
  const where = "fullyShard";
  checkArity(where, arguments, 2, "fullyShard(module, { reshardAfterForward, processGroup, mixedPrecision, … })");
  checkOptions(where, options, OPTIONS);
  if (!(module instanceof Module)) throw new TypeError(`${where}: expected an nn.Module, got ${module === null ? "null" : typeof module}`);
  if (states.has(module)) throw new Error(`${where}: ${module.constructor.name} is already fully sharded; apply fullyShard once per module`);
  const comm = options.comm ?? fsdpCommFor(options.processGroup, options.replicateGroup);
  const name = module.constructor.name;
  const own = collectParams(module, where);
  const policy = resolvePolicy(where, options.mixedPrecision, own.map(([n, p]) => [n, p]));
  const dtype = own[0]?.[1].dtype ?? "float32";
  for (const [n, p] of own) {
    if (p.dtype !== dtype) throw new TypeError(`${where}: the parameters of one unit must share a dtype, but ${own[0][0]} is ${dtype} and ${n} is ${p.dtype}; make the module one dtype or shard its parts separately`);
  }
  if (options.syncModuleStates) broadcastCoalesced(comm, [...own.map(([, p]) => p as Tensor), ...ownBuffers(module)], 0);
  const reshardAfterForward = options.reshardAfterForward ?? true;
  const reshardAfterBackward = options.reshardAfterBackward ?? true;
  if (!reshardAfterBackward && reshardAfterForward) throw new Error(`${where}: reshardAfterBackward false keeps the parameters gathered between steps, which needs reshardAfterForward false too (SHARD_GRAD_OP)`);
  if (!reshardAfterBackward && policy.paramDtype !== null && policy.paramDtype !== dtype) {
    throw new Error(`${where}: reshardAfterBackward false makes the shards views of the gathered parameters, which mixedPrecision.paramDtype ${policy.paramDtype} would round; keep reshardAfterBackward true with a lowered paramDtype`);
  }
  const limitAllGathers = options.limitAllGathers ?? 2;
  if (!Number.isInteger(limitAllGathers) || limitAllGathers < 1) throw new RangeError(`${where}: limitAllGathers must be an integer of at least 1 (the unit being run), got ${limitAllGathers}`);
  for (const key of ["forwardPrefetch", "backwardPrefetch", "reshardAfterForward", "reshardAfterBackward"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "boolean") throw new TypeError(`${where}: ${key} must be a boolean, got ${typeof options[key]}`);
  }
  const size = comm.shardSize;
  let total = 0;
  const offsets = own.map(([, p]) => {
    const at = total;
    total += new ShardLayout(p.shape, size).chunkNumel;
    return at;
  });
  const offload = resolveOffload(where, options.offload, size > 1 && reshardAfterBackward, dtype);
  const flat = size > 1 && reshardAfterBackward ? (offload?.params ? offload.file.zeros([total], dtype) : zeros([total], { dtype })) : null;
  const home: ShardHome = size === 1 ? { kind: "self" } : flat ? { kind: "flat", flat } : { kind: "rows" };
  const params = own.map(([n, p, places], i) => {
    // The unsharded parameter must own exactly its elements, in order: FSDP swaps its memory.
    if (p.offset !== 0 || p.storage.length !== p.numel || !p.isContiguous()) replaceData(p, clone(p.detach()));
    const fp = new FsdpParam(n, p, size, comm.shardRank, offsets[i], home);
    fp.places.push(...places);
    fp.free(false);
    managed.set(p, name);
    managed.set(fp.shard, name);
    if (offload) setOffloadHome(fp.shard, { file: offload.file, state: offload.optimizerState });
    return fp;
  });
  if (offload) offload.file.release(flat);
  const unit = new FsdpUnit(nextUnitIndex++, name, module, params, flat, dtype, total, comm, { reshardAfterForward, reshardAfterBackward, policy, offload });
  unit.installShards();
  const state = new FsdpState(module, unit, comm, {
    forwardPrefetch: options.forwardPrefetch ?? true,
    backwardPrefetch: options.backwardPrefetch ?? true,
    limitAllGathers,
  });
  states.set(module, state);
  module.registerForwardPreHook(() => state.preForward());
  module.registerForwardHook((_m, _args, output) => state.postForward(output));
  return module;
}

type Found = [string, Parameter, [Module, string][]];

/**
 * The parameters of `module`'s subtree that no inner unit owns, each once with every place it sits.
 * A parameter an inner unit already owns (tied across units) is an error: it would be gathered and
 * reduced twice.
 */
function collectParams(module: Module, where: string): Found[] {
  const found = new Map<Parameter, Found>();
  const walk = (m: Module, prefix: string) => {
    if (m !== module && states.has(m)) return;
    for (const [key, p] of m.localParameters()) {
      const full = prefix ? `${prefix}.${key}` : key;
      const owner = managed.get(p);
      if (owner !== undefined) {
        throw new Error(`${where}: parameter ${full} of ${module.constructor.name} is already sharded by unit '${owner}'; a parameter shared across units (tied weights) must belong to one unit: shard the module that holds both uses instead`);
      }
      const entry = found.get(p);
      if (entry) entry[2].push([m, key]);
      else found.set(p, [full, p, [[m, key]]]);
    }
    for (const [key, child] of childrenOf(m)) walk(child, prefix ? `${prefix}.${key}` : key);
  };
  walk(module, "");
  return [...found.values()];
}

function childrenOf(m: Module): [string, Module][] {
  return [...m.namedChildren()];
}

function ownBuffers(module: Module): Tensor[] {
  const out: Tensor[] = [];
  const walk = (m: Module) => {
    if (m !== module && states.has(m)) return;
    for (const [, b] of m.localBuffers()) out.push(b);
    for (const [, c] of childrenOf(m)) walk(c);
  };
  walk(module);
  return out;
}

/** The tensors in a forward's output (a tensor, or arrays and plain objects of them). */
function tensorsIn(output: unknown, depth = 0): Tensor[] {
  if (output instanceof Tensor) return [output];
  if (depth > 3 || output === null || typeof output !== "object") return [];
  const values = Array.isArray(output) ? output : Object.values(output as Record<string, unknown>);
  return values.flatMap((v) => tensorsIn(v, depth + 1));
}
