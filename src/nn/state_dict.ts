import { Tensor } from "../tensor/tensor.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import { noGrad } from "../autograd/grad_mode.js";
import type { Module } from "./module.js";

/** Tensors by dotted name, as torch's state_dict (an object keeps insertion order for such keys). */
export type StateDict = Record<string, Tensor>;

export interface LoadResult {
  missingKeys: string[];
  unexpectedKeys: string[];
}

/** The tensors of `module` that a state dict fills: parameters and persistent buffers. */
function targets(module: Module): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [prefix, m] of module.namedModules()) {
    const full = (name: string) => (prefix ? `${prefix}.${name}` : name);
    for (const [name, p] of m.localParameters()) out.set(full(name), p);
    for (const [name, b] of m.localBuffers(true)) out.set(full(name), b);
  }
  return out;
}

const MAX_LISTED = 20;

function list(keys: readonly string[]): string {
  const shown = keys.slice(0, MAX_LISTED).map((k) => `"${k}"`);
  if (keys.length > MAX_LISTED) shown.push(`… and ${keys.length - MAX_LISTED} more`);
  return shown.join(", ");
}

/**
 * torch's load_state_dict, all or nothing: every key, type and shape is checked first and all
 * problems are reported together; only when there are none is anything copied.
 */
export function applyStateDict(module: Module, stateDict: Record<string, unknown>, strict: boolean): LoadResult {
  const where = `loadStateDict for ${module.constructor.name}`;
  if (stateDict === null || typeof stateDict !== "object" || Array.isArray(stateDict) || stateDict instanceof Map) {
    throw new TypeError(`${where}: expected a plain object of tensors by name, got ${stateDict instanceof Map ? "a Map" : typeof stateDict}`);
  }
  const expected = targets(module);
  const missingKeys = [...expected.keys()].filter((k) => !(k in stateDict));
  const unexpectedKeys = Object.keys(stateDict).filter((k) => !expected.has(k));
  const problems: string[] = [];
  if (strict && missingKeys.length > 0) problems.push(`Missing key(s) in state dict: ${list(missingKeys)}.`);
  if (strict && unexpectedKeys.length > 0) problems.push(`Unexpected key(s) in state dict: ${list(unexpectedKeys)}.`);
  const copies: [Tensor, Tensor][] = [];
  for (const [key, target] of expected) {
    if (!(key in stateDict)) continue;
    const value = stateDict[key];
    if (!(value instanceof Tensor)) {
      problems.push(`"${key}" holds ${value === null ? "null" : typeof value}, expected a Tensor.`);
    } else if (!shapesEqual(value.shape, target.shape)) {
      problems.push(`size mismatch for "${key}": the state dict has shape ${formatShape(value.shape)}, the model has ${formatShape(target.shape)}.`);
    } else copies.push([target, value]);
  }
  if (problems.length > 0) {
    throw new Error(`Error(s) in ${where} (nothing was loaded):\n  ${problems.join("\n  ")}`);
  }
  noGrad(() => {
    for (const [target, value] of copies) if (value.storage !== target.storage || value.offset !== target.offset) target.copy_(value);
  });
  return { missingKeys, unexpectedKeys };
}
