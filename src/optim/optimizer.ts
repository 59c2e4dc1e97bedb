import { enableGrad, isGradEnabled, noGrad, setGradEnabled } from "../autograd/grad_mode.js";
import { clone, to } from "../ops/creation.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import { offloadHomeOf } from "../tensor/mapped.js";
import { Tensor } from "../tensor/tensor.js";
import { checkOptions } from "../util/options.js";
import { TID_TRAIN, traceNow, traceSpan, tracing } from "../util/trace.js";
import { MasterWeights } from "./master_weights.js";

/** A group of parameters sharing hyperparameters; `O` holds the optimizer's options (lr, …). */
export type ParamGroup<O> = O & { params: Tensor[] } & Record<string, unknown>;
export type ParamGroupInput<O> = Partial<O> & { params: Iterable<Tensor> } & Record<string, unknown>;
export type Params<O> = Iterable<Tensor> | Iterable<ParamGroupInput<O>>;

/** Per-parameter state, keyed by PyTorch's names (step, exp_avg, momentum_buffer, …). */
export type ParamState = Record<string, Tensor | number | null>;

/**
 * PyTorch's optimizer state dict: state keyed by the parameter's position across all groups,
 * and the groups' hyperparameters (snake_case, as PyTorch writes them) with those positions.
 */
export interface OptimizerStateDict {
  state: Record<number, ParamState>;
  param_groups: Record<string, unknown>[];
}

/** PyTorch's switches between implementations of the same update; accepted in a group and without effect here. */
const IMPLEMENTATION_FLAGS = ["foreach", "fused", "capturable", "differentiable"];

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Base of every optimizer (torch.optim.Optimizer): parameter groups with their own
 * hyperparameters, per-parameter state, zeroGrad, and a state dict in PyTorch's structure.
 */
export abstract class Optimizer<O extends { lr: number }> {
  readonly defaults: O;
  paramGroups: ParamGroup<O>[] = [];
  state = new Map<Tensor, ParamState>();
  private readonly name: string;
  /** float32 copies that bfloat16 parameters are updated through (see master_weights.ts). */
  private readonly masterWeights = new MasterWeights();

  constructor(params: Params<O>, defaults: O) {
    this.name = this.constructor.name;
    this.defaults = defaults;
    const list = [...(params as Iterable<Tensor | ParamGroupInput<O>>)];
    if (list.length === 0) throw new Error(`${this.name}: got an empty parameter list; pass model.parameters() (or parameter groups)`);
    if (list.every((p) => p instanceof Tensor)) this.addParamGroup({ params: list as Tensor[] } as unknown as ParamGroupInput<O>);
    else if (list.every((p) => !(p instanceof Tensor) && typeof p === "object" && p !== null && "params" in p)) {
      for (const g of list as ParamGroupInput<O>[]) this.addParamGroup(g);
    } else throw new TypeError(`${this.name}: expected an iterable of tensors or of parameter groups ({ params, ...options }), not a mix`);
  }

  /** Adds a group; options it leaves out take the optimizer's defaults. A parameter may be in one group only. */
  addParamGroup(group: ParamGroupInput<O>): void {
    if (!group || typeof group !== "object" || !("params" in group)) throw new TypeError(`${this.name}.addParamGroup: expected { params, ...options }`);
    // A group's keys are the optimizer's options (a typo would otherwise silently take the default).
    checkOptions(`${this.name} parameter group`, group, ["params", "initialLr", ...Object.keys(this.defaults), ...IMPLEMENTATION_FLAGS]);
    const params = group.params instanceof Tensor ? [group.params] : [...group.params];
    params.forEach((p, i) => {
      if (!(p instanceof Tensor)) throw new TypeError(`${this.name}: parameter ${i} of a group is not a Tensor`);
      if (!p.isLeaf) throw new Error(`${this.name}: can only optimize leaf tensors, but parameter ${i} (${p.describe()}) is the result of an op`);
      if (p.dtype !== "float32" && p.dtype !== "float64" && p.dtype !== "bfloat16") {
        throw new TypeError(`${this.name}: parameters must be float32, float64 or bfloat16, got ${p.describe()}`);
      }
      if (p.dtype === "bfloat16" && !p.isContiguous()) throw new Error(`${this.name}: a bfloat16 parameter must be contiguous, got ${p.describe()}`);
    });
    const seen = new Set<Tensor>(this.paramGroups.flatMap((g) => g.params));
    if (params.some((p) => seen.has(p)) || new Set(params).size !== params.length) {
      throw new Error(`${this.name}: some parameters appear in more than one parameter group (or twice in one)`);
    }
    const merged = { ...this.defaults, ...group, params } as ParamGroup<O>;
    this.validate(merged);
    this.paramGroups.push(merged);
  }

  /** Checks a group's hyperparameters, throwing a message that names the bad value. */
  protected abstract validate(group: ParamGroup<O>): void;

  /** Updates the parameters of one group from their gradients. */
  protected abstract updateGroup(group: ParamGroup<O>): void;

  /**
   * One optimization step over every parameter that has a gradient. With a closure, it is called
   * first (with grad mode on) to recompute the loss, which step returns.
   */
  step(closure?: () => Tensor | number): number | undefined {
    const traceStart = tracing.on ? traceNow() : 0;
    let loss: number | undefined;
    if (closure) {
      const l = enableGrad(closure);
      loss = l instanceof Tensor ? l.item() : l;
    }
    // No closure made per step (noGrad's argument, some()'s predicates): V8 drops a closure's
    // optimized code at a full collection when no closure that ran it is alive, which between steps
    // none is, so each one ran unoptimized and was compiled again after every full collection.
    const previous = isGradEnabled();
    setGradEnabled(false);
    try {
      for (const group of this.paramGroups) this.updateAnyGroup(group);
    } finally {
      setGradEnabled(previous);
    }
    if (traceStart !== 0) traceSpan(TID_TRAIN, `${this.constructor.name}.step`, traceStart);
    return loss;
  }

  private updateAnyGroup(group: ParamGroup<O>): void {
    let offloaded = false;
    let bfloat16 = false;
    for (const p of group.params) {
      if (offloadHomeOf(p) !== null) offloaded = true;
      if (p.dtype === "bfloat16") bfloat16 = true;
    }
    if (offloaded) {
      this.updateOffloaded(group);
      return;
    }
    if (!bfloat16) {
      this.updateGroup(group);
      return;
    }
    // bfloat16 parameters are updated through their float32 masters, then rounded back.
    const params = group.params;
    group.params = this.masterWeights.substitute(params);
    try {
      this.updateGroup(group);
    } finally {
      group.params = params;
    }
    this.masterWeights.writeBack(params);
  }

  /**
   * A group with offloaded parameters (their memory, gradients or state in a memory-mapped file) is
   * stepped one parameter at a time, each followed by dropping its pages from the process, so that
   * a step holds one parameter's worth of them in memory, not the whole model's (ZeRO-Infinity's
   * streaming, with the kernel paging). Each parameter's update is the same kernel call as in a
   * group step, so the results are the same.
   */
  private updateOffloaded(group: ParamGroup<O>): void {
    const params = group.params;
    try {
      for (const p of params) {
        const home = offloadHomeOf(p);
        // Faulted in with one call each rather than page by page as the kernel walks them.
        if (home) {
          home.file.populate(p, true);
          home.file.populate(p.grad, false);
          for (const v of stateTensors(this.state.get(p))) home.file.populate(v, true);
        }
        group.params = [p];
        this.updateGroup(group);
        if (!home) continue;
        home.file.release(p);
        home.file.release(p.grad);
        for (const v of stateTensors(this.state.get(p))) home.file.release(v);
      }
    } finally {
      group.params = params;
    }
  }

  /** Clears the gradients of every optimized parameter: drops them (default) or zeroes them in place. */
  zeroGrad(setToNone = true): void {
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        if (!p.grad) continue;
        if (setToNone) p.grad = null;
        else {
          const g = p.grad.gradFn ? p.grad.detach() : p.grad;
          noGrad(() => g.zero_());
          p.grad = g;
        }
      }
    }
  }

  stateDict(): OptimizerStateDict {
    const index = new Map<Tensor, number>();
    const paramGroups = this.paramGroups.map((group) => {
      const packed: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(group)) if (k !== "params") packed[snake(k)] = Array.isArray(v) ? [...v] : v;
      packed.params = group.params.map((p) => {
        if (!index.has(p)) index.set(p, index.size);
        return index.get(p)!;
      });
      return packed;
    });
    const state: Record<number, ParamState> = {};
    for (const [key, s] of this.state) {
      // A bfloat16 parameter's state is kept under its float32 master, which the state dict carries as master_param.
      const owner = this.masterWeights.ownerOf(key);
      const p = owner ?? key;
      if (index.has(p)) state[index.get(p)!] = owner ? { ...s, master_param: key } : { ...s };
    }
    return { state, param_groups: paramGroups };
  }

  /**
   * Restores hyperparameters and state from stateDict(). Group sizes and state shapes are checked
   * before anything changes; tensors are copied (cast to the parameter's dtype).
   */
  loadStateDict(stateDict: OptimizerStateDict): void {
    const where = `${this.name}.loadStateDict`;
    if (!stateDict || typeof stateDict !== "object" || !Array.isArray(stateDict.param_groups) || typeof stateDict.state !== "object") {
      throw new TypeError(`${where}: expected { state, param_groups } as stateDict() returns`);
    }
    const saved = stateDict.param_groups;
    if (saved.length !== this.paramGroups.length) {
      throw new Error(`${where}: the state dict has ${saved.length} parameter group(s), this optimizer has ${this.paramGroups.length}`);
    }
    const byIndex = new Map<number, Tensor>();
    saved.forEach((g, gi) => {
      const ids = g.params as unknown;
      const mine = this.paramGroups[gi].params;
      if (!Array.isArray(ids) || ids.length !== mine.length) {
        throw new Error(`${where}: group ${gi} has ${Array.isArray(ids) ? ids.length : "no"} parameters in the state dict but ${mine.length} here`);
      }
      ids.forEach((id, j) => byIndex.set(Number(id), mine[j]));
    });
    const newState = new Map<Tensor, ParamState>();
    for (const [key, entry] of Object.entries(stateDict.state)) {
      const p = byIndex.get(Number(key));
      if (!p) throw new Error(`${where}: the state dict has state for parameter ${key}, which no group lists`);
      const restored: ParamState = {};
      for (const [name, v] of Object.entries(entry)) {
        if (v instanceof Tensor && name !== "step" && !shapesEqual(v.shape, p.shape)) {
          throw new Error(`${where}: "${name}" of parameter ${key} has shape ${formatShape(v.shape)} but the parameter has ${formatShape(p.shape)}`);
        }
        restored[name] = v;
      }
      newState.set(p, restored);
    }
    const groups = saved.map((g, gi) => {
      const group = { ...this.paramGroups[gi] } as Record<string, unknown>;
      for (const [k, v] of Object.entries(g)) if (k !== "params") group[camel(k)] = Array.isArray(v) ? [...v] : v;
      this.validate(group as ParamGroup<O>);
      return group as ParamGroup<O>;
    });
    const keyed = new Map<Tensor, ParamState>();
    noGrad(() => {
      for (const [p, s] of newState) {
        // bfloat16 parameters keep float32 state under their master (from master_param when saved).
        const stateDType = p.dtype === "bfloat16" ? "float32" : p.dtype;
        for (const [name, v] of Object.entries(s)) {
          if (!(v instanceof Tensor)) continue;
          // A 0-d `step` tensor (as PyTorch 1.13 saves it) becomes the number this optimizer keeps.
          s[name] = name === "step" ? v.item() : restoredState(p, v.dtype === stateDType ? v : to(v, stateDType));
        }
        if (p.dtype !== "bfloat16") {
          keyed.set(p, s);
          continue;
        }
        const saved = s.master_param;
        delete s.master_param;
        keyed.set(saved instanceof Tensor ? this.masterWeights.adopt(p, saved) : this.masterWeights.masterOf(p), s);
      }
    });
    this.paramGroups = groups;
    this.state = keyed;
  }

  /** This parameter's state, created empty on first use. */
  protected stateOf(p: Tensor): ParamState {
    let s = this.state.get(p);
    if (!s) this.state.set(p, (s = {}));
    return s;
  }
}

function stateTensors(state: ParamState | undefined): Tensor[] {
  return state ? Object.values(state).filter((v): v is Tensor => v instanceof Tensor) : [];
}

/**
 * A copy of a loaded state tensor, owned by the optimizer. An offloaded parameter's state goes back
 * into its offload file (where zerosLike puts it on first use), so that resuming does not pull
 * state larger than memory into the pool.
 */
function restoredState(p: Tensor, v: Tensor): Tensor {
  const home = offloadHomeOf(p);
  if (!home?.state || !home.file.isOpen) return clone(v).detach();
  return home.file.zeros(v.shape, v.dtype).copy_(v);
}
