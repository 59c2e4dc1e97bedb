import { Tensor } from "../tensor/tensor.js";

/** Where a tensor of the training state went: which file, under which name. */
interface TensorRef {
  __tensor__: { file: string; name: string };
}

export interface SplitState {
  /** The state with every tensor replaced by a reference; plain JSON. */
  json: unknown;
  /** Tensors by file (one file per top-level key), each keyed by its dotted path inside that key. */
  files: Map<string, Map<string, Tensor>>;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Tensor) && !ArrayBuffer.isView(v);
}

/**
 * Separates tensors from the rest of a training state. A model's state dict under `model`
 * becomes `model.safetensors` with the state dict's own keys as tensor names, so that PyTorch
 * reads it with the names a PyTorch model of the same structure uses.
 */
export function splitState(state: Record<string, unknown>): SplitState {
  const files = new Map<string, Map<string, Tensor>>();
  const walk = (value: unknown, file: string, path: string[]): unknown => {
    if (value instanceof Tensor) {
      // A tensor saved directly under a top-level key is named after the key (safetensors has no empty names).
      const name = path.length === 0 ? file : path.join(".");
      let tensors = files.get(file);
      if (!tensors) files.set(file, (tensors = new Map()));
      if (tensors.has(name)) throw new Error(`checkpoint.save: two tensors would be stored under the name ${JSON.stringify(name)} in ${file}`);
      tensors.set(name, value);
      return { __tensor__: { file, name } } satisfies TensorRef;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, file, [...path, String(i)]));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, file, [...path, k]);
      return out;
    }
    if (typeof value === "bigint") return { __bigint__: value.toString() };
    if (typeof value === "number" && !Number.isFinite(value)) return { __number__: String(value) };
    if (value === undefined || typeof value === "function" || typeof value === "symbol") {
      throw new TypeError(`checkpoint.save: the state at ${[file, ...path].join(".")} is ${typeof value}, which cannot be saved; use null or drop the key`);
    }
    return value;
  };
  const json: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) json[key] = walk(value, key, []);
  return { json, files };
}

/** Puts the loaded tensors back where splitState took them from. */
export function joinState(json: unknown, tensorsOf: (file: string, name: string) => Tensor): unknown {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (isPlainObject(value)) {
      if ("__tensor__" in value) {
        const ref = (value as unknown as TensorRef).__tensor__;
        return tensorsOf(ref.file, ref.name);
      }
      if ("__bigint__" in value) return BigInt(value.__bigint__ as string);
      if ("__number__" in value) return Number(value.__number__);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v);
      return out;
    }
    return value;
  };
  return walk(json);
}
