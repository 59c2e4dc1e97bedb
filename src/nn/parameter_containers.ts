import { Tensor } from "../tensor/tensor.js";
import { checkArity } from "../util/options.js";
import { Module } from "./module.js";
import { Parameter } from "./parameter.js";

/** A tensor becomes a Parameter, as PyTorch's containers do on insertion; a Parameter is kept as it is. */
function asParameter(p: unknown, where: string): Parameter {
  if (p instanceof Parameter) return p;
  if (p instanceof Tensor) return new Parameter(p);
  throw new TypeError(`${where}: expected a Parameter or a Tensor, got ${p === null ? "null" : typeof p}`);
}

/**
 * Parameters in a list, registered as "0", "1", … (torch.nn.ParameterList), so they appear in
 * parameters() and in the state dict as `name.0`.
 */
export class ParameterList extends Module {
  [index: number]: Parameter;

  constructor(parameters: Iterable<Tensor> = []) {
    super();
    checkArity("ParameterList", arguments, 1, "new nn.ParameterList([p0, p1, …])");
    this.extend(parameters);
  }

  get length(): number {
    let n = 0;
    while (Object.prototype.hasOwnProperty.call(this, String(n))) n++;
    return n;
  }

  /** The i-th parameter; negative counts from the end. */
  get(index: number): Parameter {
    const n = this.length;
    const i = index < 0 ? index + n : index;
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`ParameterList: index ${index} is out of range for ${n} parameters`);
    return this[i];
  }

  append(p: Tensor): this {
    (this as unknown as Record<string, Parameter>)[String(this.length)] = asParameter(p, "ParameterList.append");
    return this;
  }

  extend(parameters: Iterable<Tensor>): this {
    if (parameters === null || typeof (parameters as Iterable<Tensor>)[Symbol.iterator] !== "function") {
      throw new TypeError("ParameterList: expected an iterable of tensors");
    }
    for (const p of parameters) this.append(p);
    return this;
  }

  *[Symbol.iterator](): Iterator<Parameter> {
    const n = this.length;
    for (let i = 0; i < n; i++) yield this[i];
  }

  override extraRepr(): string {
    return [...this].map((p, i) => `(${i}): ${p.describe()}`).join("\n  ");
  }
}

/** Parameters by name, in insertion order (torch.nn.ParameterDict); names may not contain ".". */
export class ParameterDict extends Module {
  private readonly entriesMap = new Map<string, Parameter>();

  constructor(parameters: Record<string, Tensor> | Iterable<[string, Tensor]> = {}) {
    super();
    checkArity("ParameterDict", arguments, 1, "new nn.ParameterDict({ name: p, … })");
    const pairs = Symbol.iterator in Object(parameters) ? (parameters as Iterable<[string, Tensor]>) : Object.entries(parameters as Record<string, Tensor>);
    for (const [k, p] of pairs) this.set(k, p);
  }

  override localParameters(): [string, Parameter][] {
    return [...this.entriesMap];
  }

  get size(): number {
    return this.entriesMap.size;
  }

  get(key: string): Parameter {
    const p = this.entriesMap.get(key);
    if (!p) throw new RangeError(`ParameterDict: no parameter named "${key}" (have: ${[...this.entriesMap.keys()].join(", ") || "none"})`);
    return p;
  }

  set(key: string, p: Tensor): this {
    if (typeof key !== "string" || key === "" || key.includes(".")) throw new TypeError(`ParameterDict: a key must be a non-empty string without ".", got ${JSON.stringify(key)}`);
    this.entriesMap.set(key, asParameter(p, `ParameterDict.set("${key}")`));
    return this;
  }

  has(key: string): boolean {
    return this.entriesMap.has(key);
  }

  delete(key: string): boolean {
    return this.entriesMap.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.entriesMap.keys();
  }

  values(): IterableIterator<Parameter> {
    return this.entriesMap.values();
  }

  entries(): IterableIterator<[string, Parameter]> {
    return this.entriesMap.entries();
  }
}
