import { Tensor } from "../tensor/tensor.js";
import type { DType } from "../tensor/dtype.js";
import { noGrad } from "../autograd/grad_mode.js";
import { to } from "../ops/creation.js";
import { addHook, runWithHooks, type AnyArgs, type ForwardHook, type ForwardPreHook, type RemovableHandle } from "./hooks.js";
import { Parameter, replaceData } from "./parameter.js";
import { applyStateDict, type LoadResult, type StateDict } from "./state_dict.js";
import { dtypeOfTo, type ToTarget } from "../tensor/device.js";
import { checkArity, checkOptions } from "../util/options.js";
import { TID_TRAIN, traceNow, traceSpan, tracing } from "../util/trace.js";

export type { StateDict, LoadResult } from "./state_dict.js";
export type { ForwardHook, ForwardPreHook, RemovableHandle } from "./hooks.js";

/** Bookkeeping kept under a symbol, so that it never shows up among a module's own fields. */
interface ModuleState {
  buffers: Set<string>;
  nonPersistent: Set<string>;
  preHooks: Map<number, ForwardPreHook>;
  hooks: Map<number, ForwardHook>;
}

const STATE = Symbol("ringtorch.module");

/** While tracing: how many module calls are running, so that only the outermost is a span. */
let forwardDepth = 0;

/** The outermost module call (the model, or DDP around it) as a span on the training thread. */
function tracedCall<M extends Module>(module: M, args: Parameters<M["forward"]>): ReturnType<M["forward"]> {
  const t0 = traceNow();
  forwardDepth++;
  try {
    return module.call(...args);
  } finally {
    forwardDepth--;
    traceSpan(TID_TRAIN, `${module.constructor.name}.forward`, t0);
  }
}

/**
 * Base class for every layer and model (torch.nn.Module).
 *
 * Registration works by assignment, as in PyTorch: a field holding a Parameter is a parameter, a
 * field holding a Module is a submodule, and a field named with registerBuffer() is a buffer. Own
 * fields are discovered in insertion order (TypeScript defines declared fields in declaration
 * order), and the field name is the state-dict name. Layers therefore name their members as
 * PyTorch does (`self_attn`, `in_proj_weight`, `norm1`) even though methods are camelCase, so that
 * a state dict moves between ringtorch and PyTorch unchanged. Fields holding anything else
 * (numbers, functions, arrays, plain tensors) are ignored.
 *
 * Containers that keep children elsewhere (ModuleDict) override `localChildren()`.
 */
export class Module {
  training = true;
  declare private [STATE]: ModuleState;

  constructor() {
    Object.defineProperty(this, STATE, {
      value: { buffers: new Set(), nonPersistent: new Set(), preHooks: new Map(), hooks: new Map() } satisfies ModuleState,
      enumerable: false,
      writable: true,
      configurable: true,
    });
  }

  /** The computation; subclasses override it with their own signature. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  forward(..._args: AnyArgs): any {
    throw new Error(`${this.constructor.name}: this module has no forward(); subclasses of Module must define one`);
  }

  /** Runs forward with the forward pre-hooks and hooks (torch's `module(x)`). */
  call<M extends Module>(this: M, ...args: Parameters<M["forward"]>): ReturnType<M["forward"]> {
    if (tracing.on && forwardDepth === 0) return tracedCall(this, args);
    const state = this[STATE];
    if (state.preHooks.size === 0 && state.hooks.size === 0) return this.forward(...args);
    return runWithHooks(this, args, state.preHooks, state.hooks, (input) => this.forward(...input));
  }

  registerForwardPreHook(hook: ForwardPreHook): RemovableHandle {
    return addHook(this[STATE].preHooks, hook);
  }

  registerForwardHook(hook: ForwardHook): RemovableHandle {
    return addHook(this[STATE].hooks, hook);
  }

  registerParameter(name: string, param: Parameter | null): void {
    this.checkNewName(name, "registerParameter");
    if (param !== null && !(param instanceof Parameter)) {
      throw new TypeError(`registerParameter("${name}"): expected a Parameter or null, got ${describe(param)}; wrap a tensor with new Parameter(t)`);
    }
    this.field(name, param);
  }

  /** Registers a tensor that is state but not a parameter (running statistics, masks). */
  registerBuffer(name: string, tensor: Tensor | null, persistent = true): void {
    this.checkNewName(name, "registerBuffer");
    if (tensor !== null && !(tensor instanceof Tensor)) throw new TypeError(`registerBuffer("${name}"): expected a Tensor or null, got ${describe(tensor)}`);
    if (tensor instanceof Parameter) throw new TypeError(`registerBuffer("${name}"): a Parameter cannot be a buffer; use registerParameter`);
    const state = this[STATE];
    state.buffers.add(name);
    if (persistent) state.nonPersistent.delete(name);
    else state.nonPersistent.add(name);
    this.field(name, tensor);
  }

  registerModule(name: string, module: Module | null): void {
    this.checkNewName(name, "registerModule");
    if (module !== null && !(module instanceof Module)) throw new TypeError(`registerModule("${name}"): expected a Module or null, got ${describe(module)}`);
    this.field(name, module);
  }

  addModule(name: string, module: Module | null): void {
    this.registerModule(name, module);
  }

  /** This module's direct submodules with their names (nulls skipped). */
  protected localChildren(): [string, Module][] {
    const out: [string, Module][] = [];
    for (const key of Object.keys(this)) {
      const v = this.field(key);
      if (v instanceof Module) out.push([key, v]);
    }
    return out;
  }

  /** Parameters registered directly on this module, in registration order. */
  localParameters(): [string, Parameter][] {
    const out: [string, Parameter][] = [];
    for (const key of Object.keys(this)) {
      const v = this.field(key);
      if (v instanceof Parameter && !this[STATE].buffers.has(key)) out.push([key, v]);
    }
    return out;
  }

  /** Buffers registered directly on this module (nulls skipped); `persistentOnly` for the state dict. */
  localBuffers(persistentOnly = false): [string, Tensor][] {
    const state = this[STATE];
    const out: [string, Tensor][] = [];
    for (const key of Object.keys(this)) {
      if (!state.buffers.has(key) || (persistentOnly && state.nonPersistent.has(key))) continue;
      const v = this.field(key);
      if (v instanceof Tensor) out.push([key, v]);
    }
    return out;
  }

  *namedChildren(): Generator<[string, Module]> {
    const seen = new Set<Module>();
    for (const [name, m] of this.localChildren()) {
      if (seen.has(m)) continue;
      seen.add(m);
      yield [name, m];
    }
  }

  *children(): Generator<Module> {
    for (const [, m] of this.namedChildren()) yield m;
  }

  /** This module and every descendant, depth first, each once (torch's named_modules). */
  *namedModules(prefix = "", memo = new Set<Module>()): Generator<[string, Module]> {
    if (memo.has(this)) return;
    memo.add(this);
    yield [prefix, this];
    for (const [name, child] of this.localChildren()) yield* child.namedModules(prefix ? `${prefix}.${name}` : name, memo);
  }

  *modules(): Generator<Module> {
    for (const [, m] of this.namedModules()) yield m;
  }

  /** Every parameter with its dotted name, each tensor once even when shared (tied weights). */
  *namedParameters(prefix = "", recurse = true): Generator<[string, Parameter]> {
    const seen = new Set<Tensor>();
    const modules: Iterable<[string, Module]> = recurse ? this.namedModules(prefix) : [[prefix, this]];
    for (const [modPrefix, m] of modules) {
      for (const [name, p] of m.localParameters()) {
        if (seen.has(p)) continue;
        seen.add(p);
        yield [modPrefix ? `${modPrefix}.${name}` : name, p];
      }
    }
  }

  parameters(recurse = true): Parameter[] {
    return [...this.namedParameters("", recurse)].map(([, p]) => p);
  }

  *namedBuffers(prefix = "", recurse = true): Generator<[string, Tensor]> {
    const seen = new Set<Tensor>();
    const modules: Iterable<[string, Module]> = recurse ? this.namedModules(prefix) : [[prefix, this]];
    for (const [modPrefix, m] of modules) {
      for (const [name, b] of m.localBuffers()) {
        if (seen.has(b)) continue;
        seen.add(b);
        yield [modPrefix ? `${modPrefix}.${name}` : name, b];
      }
    }
  }

  buffers(recurse = true): Tensor[] {
    return [...this.namedBuffers("", recurse)].map(([, b]) => b);
  }

  train(mode = true): this {
    for (const m of this.modules()) m.training = mode;
    return this;
  }

  eval(): this {
    return this.train(false);
  }

  /** Clears every parameter's gradient: drops it (setToNone, the default) or zeroes it in place. */
  zeroGrad(setToNone = true): void {
    for (const p of this.parameters()) {
      if (!p.grad) continue;
      if (setToNone) p.grad = null;
      else {
        const g = p.grad.gradFn ? p.grad.detach() : p.grad;
        noGrad(() => g.zero_());
        p.grad = g;
      }
    }
  }

  /** Calls fn on every submodule (children first) and then on this module. */
  apply(fn: (module: Module) => void): this {
    for (const child of this.children()) child.apply(fn);
    fn(this);
    return this;
  }

  /**
   * Casts floating parameters and buffers to dtype, in place: the Parameter objects stay the same.
   * Accepts what Tensor.to accepts ("cpu", { device, dtype }); a device other than the CPU is an error.
   */
  to(target: ToTarget, dtypeArg?: DType): this {
    const dtype = dtypeOfTo(`${this.constructor.name}.to`, target, dtypeArg);
    if (dtype === undefined) return this;
    noGrad(() => {
      for (const m of this.modules()) {
        for (const [, p] of m.localParameters()) castInPlace(p, dtype);
        for (const [, b] of m.localBuffers()) castInPlace(b, dtype);
      }
    });
    return this;
  }

  float(): this {
    return this.to("float32");
  }

  double(): this {
    return this.to("float64");
  }

  /**
   * Parameters and persistent buffers by dotted name (torch's state_dict). The tensors share memory
   * with the module's and are detached from autograd unless keepVars.
   */
  stateDict(options: { prefix?: string; keepVars?: boolean } = {}): StateDict {
    checkArity(`${this.constructor.name}.stateDict`, arguments, 1, "module.stateDict({ prefix, keepVars })");
    checkOptions(`${this.constructor.name}.stateDict`, options, ["prefix", "keepVars"]);
    const out: StateDict = {};
    for (const [prefix, m] of this.namedModules(options.prefix ?? "")) {
      const full = (name: string) => (prefix ? `${prefix}.${name}` : name);
      for (const [name, p] of m.localParameters()) out[full(name)] = options.keepVars ? p : p.detach();
      for (const [name, b] of m.localBuffers(true)) out[full(name)] = options.keepVars ? b : b.detach();
    }
    return out;
  }

  /**
   * Copies a state dict into this module's parameters and buffers. Every key and shape is checked
   * before anything is copied, so on an error the module is left exactly as it was.
   * With strict (the default), missing and unexpected keys are errors; otherwise they are returned.
   */
  loadStateDict(stateDict: StateDict, strict: boolean | { strict?: boolean } = true): LoadResult {
    const where = `${this.constructor.name}.loadStateDict`;
    checkArity(where, arguments, 2, "module.loadStateDict(stateDict, { strict })");
    // PyTorch's keyword `strict=False` ports as { strict: false }; an object must not read as a truthy `strict`.
    if (typeof strict === "object" && strict !== null) {
      checkOptions(where, strict, ["strict"]);
      strict = strict.strict ?? true;
    }
    if (typeof strict !== "boolean") throw new TypeError(`${where}: strict must be a boolean or { strict }, got ${typeof strict}`);
    return applyStateDict(this, stateDict, strict);
  }

  /** Extra text for toString(), e.g. `in_features=784, out_features=10, bias=true`. */
  extraRepr(): string {
    return "";
  }

  toString(): string {
    const children = [...this.localChildren()];
    const extra = this.extraRepr();
    if (children.length === 0) return `${this.constructor.name}(${extra})`;
    const lines = children.map(([name, m]) => `  (${name}): ${m.toString().replace(/\n/g, "\n  ")}`);
    return `${this.constructor.name}(${extra ? `\n  ${extra}` : ""}\n${lines.join("\n")}\n)`;
  }

  private field(name: string, value?: unknown): unknown {
    const self = this as unknown as Record<string, unknown>;
    if (arguments.length > 1) self[name] = value;
    return self[name];
  }

  private checkNewName(name: string, where: string): void {
    if (typeof name !== "string" || name === "" || name.includes(".")) {
      throw new TypeError(`${where}: the name must be a non-empty string without ".", got ${JSON.stringify(name)}`);
    }
    if (name in Module.prototype || typeof (this as unknown as Record<string, unknown>)[name] === "function") {
      throw new Error(`${where}: "${name}" is the name of a Module method and cannot be used for a member`);
    }
  }
}

function castInPlace(t: Tensor, dtype: DType): void {
  const floating = (d: DType) => d === "float32" || d === "float64" || d === "bfloat16";
  if (!floating(t.dtype) || !floating(dtype) || t.dtype === dtype) return;
  replaceData(t, to(t.detach(), dtype));
  if (t.grad) t.grad = to(t.grad.detach(), dtype);
}

function describe(v: unknown): string {
  if (v instanceof Tensor) return v.describe();
  return v === null ? "null" : typeof v === "object" ? (v.constructor?.name ?? "an object") : typeof v;
}
