import { Tensor } from "../tensor/tensor.js";
import { checkArity } from "../util/options.js";
import { KeyedContainer } from "./keyed_container.js";
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
export class ParameterDict extends KeyedContainer<Tensor, Parameter> {
  constructor(parameters: Record<string, Tensor> | Iterable<[string, Tensor]> = {}) {
    super();
    checkArity("ParameterDict", arguments, 1, "new nn.ParameterDict({ name: p, … })");
    this.setAll(parameters);
  }

  protected get kind(): string {
    return "ParameterDict";
  }

  protected get noun(): string {
    return "parameter";
  }

  protected checkValue(p: Tensor, where: string): Parameter {
    return asParameter(p, where);
  }

  override localParameters(): [string, Parameter][] {
    return [...this.entriesMap];
  }
}
