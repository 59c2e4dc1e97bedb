import type { Tensor } from "../tensor/tensor.js";
import { KeyedContainer } from "./keyed_container.js";
import { Module } from "./module.js";
import { checkArity } from "../util/options.js";

function checkModule(m: unknown, where: string): Module {
  if (!(m instanceof Module)) throw new TypeError(`${where}: expected a Module, got ${m === null ? "null" : typeof m}`);
  return m;
}

/**
 * Members stored as own fields "0", "1", …, which is how PyTorch names them in a state dict
 * (`layers.0.weight`); JavaScript lists integer-like keys first and in ascending order.
 */
abstract class IndexedModules extends Module {
  [index: number]: Module;

  get length(): number {
    let n = 0;
    while (Object.prototype.hasOwnProperty.call(this, String(n))) n++;
    return n;
  }

  protected setAt(i: number, m: Module): void {
    (this as unknown as Record<string, Module>)[String(i)] = m;
  }

  /** The i-th member; negative counts from the end. */
  get(index: number): Module {
    const n = this.length;
    const i = index < 0 ? index + n : index;
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`${this.constructor.name}: index ${index} is out of range for ${n} modules`);
    return this[i];
  }

  append(module: Module): this {
    this.setAt(this.length, checkModule(module, `${this.constructor.name}.append`));
    return this;
  }

  extend(modules: Iterable<Module>): this {
    for (const m of modules) this.append(m);
    return this;
  }

  /** Inserts before `index`, renumbering the members after it. */
  insert(index: number, module: Module): this {
    const n = this.length;
    const at = index < 0 ? Math.max(0, index + n) : Math.min(index, n);
    checkModule(module, `${this.constructor.name}.insert`);
    for (let i = n; i > at; i--) this.setAt(i, this[i - 1]);
    this.setAt(at, module);
    return this;
  }

  *[Symbol.iterator](): Iterator<Module> {
    const n = this.length;
    for (let i = 0; i < n; i++) yield this[i];
  }
}

/** Runs its modules one after the other (torch.nn.Sequential). */
export class Sequential extends IndexedModules {
  constructor(...modules: Module[] | [Record<string, Module>]) {
    super();
    const first = modules[0];
    if (modules.length === 1 && !(first instanceof Module) && typeof first === "object" && first !== null) {
      for (const [name, m] of Object.entries(first)) this.registerModule(name, checkModule(m, `Sequential("${name}")`));
    } else modules.forEach((m, i) => this.setAt(i, checkModule(m, `Sequential(module ${i})`)));
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override forward(input: Tensor, ...rest: any[]): any {
    let x: unknown = input;
    let first = true;
    for (const [, m] of this.localChildren()) {
      x = first ? m.call(x, ...rest) : m.call(x);
      first = false;
    }
    return x;
  }
}

/** Holds submodules in a list so that they are registered (torch.nn.ModuleList). */
export class ModuleList<M extends Module = Module> extends IndexedModules {
  [index: number]: M;

  constructor(modules: Iterable<M> = []) {
    super();
    checkArity("ModuleList", arguments, 1, "new nn.ModuleList([m0, m1, …])");
    this.extend(modules);
  }

  override get(index: number): M {
    return super.get(index) as M;
  }

  override *[Symbol.iterator](): Iterator<M> {
    const n = this.length;
    for (let i = 0; i < n; i++) yield this[i];
  }
}

/**
 * Submodules by name, in insertion order (torch.nn.ModuleDict). Names may be anything without ".".
 * Pass [name, module] pairs to keep the order of integer-like names: a JavaScript object literal
 * lists those first.
 */
export class ModuleDict<M extends Module = Module> extends KeyedContainer<M, M> {
  constructor(modules: Record<string, M> | Iterable<[string, M]> = {}) {
    super();
    checkArity("ModuleDict", arguments, 1, "new nn.ModuleDict({ name: module, … })");
    this.setAll(modules);
  }

  protected get kind(): string {
    return "ModuleDict";
  }

  protected get noun(): string {
    return "module";
  }

  protected checkValue(module: M, where: string): M {
    return checkModule(module, where) as M;
  }

  protected override localChildren(): [string, Module][] {
    return [...this.entriesMap];
  }
}
