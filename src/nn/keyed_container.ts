import { Module } from "./module.js";

/**
 * What ModuleDict and ParameterDict share: values by name in insertion order (names non-empty and
 * without "."), with the Map-like methods. A subclass names itself and its values for errors, checks
 * (or converts) what is set, and exposes the entries as children or as parameters.
 */
export abstract class KeyedContainer<In, V extends In> extends Module {
  protected readonly entriesMap = new Map<string, V>();

  /** The class name in errors ("ModuleDict"). */
  protected abstract get kind(): string;
  /** What a value is called in errors ("module"). */
  protected abstract get noun(): string;
  /** Checks (or converts) a value being set; `where` names the call in its error. */
  protected abstract checkValue(value: In, where: string): V;

  /** Sets each [name, value] of an iterable, or each entry of a plain object. */
  protected setAll(items: Record<string, In> | Iterable<[string, In]>): void {
    const pairs = Symbol.iterator in Object(items) ? (items as Iterable<[string, In]>) : Object.entries(items as Record<string, In>);
    for (const [k, v] of pairs) this.set(k, v);
  }

  get size(): number {
    return this.entriesMap.size;
  }

  get(key: string): V {
    const v = this.entriesMap.get(key);
    if (!v) throw new RangeError(`${this.kind}: no ${this.noun} named "${key}" (have: ${[...this.entriesMap.keys()].join(", ") || "none"})`);
    return v;
  }

  set(key: string, value: In): this {
    if (typeof key !== "string" || key === "" || key.includes(".")) throw new TypeError(`${this.kind}: a key must be a non-empty string without ".", got ${JSON.stringify(key)}`);
    this.entriesMap.set(key, this.checkValue(value, `${this.kind}.set("${key}")`));
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

  values(): IterableIterator<V> {
    return this.entriesMap.values();
  }

  entries(): IterableIterator<[string, V]> {
    return this.entriesMap.entries();
  }
}
