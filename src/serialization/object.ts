import { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import { loadFile, save as saveTensors, type TensorDict } from "./io.js";

/** The metadata key that holds the object's structure, with each tensor replaced by its name in the file. */
export const TREE_KEY = "ringtorch.tree";

type Tree = null | boolean | number | string | Tree[] | { [key: string]: Tree };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof Tensor || ArrayBuffer.isView(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Saves nested state (torch.save without pickle): objects, arrays, numbers, strings, booleans,
 * null, bigints and tensors, in one safetensors file. The tensors are the file's tensors, named
 * by their path (`model.0.weight`, `optimizer.state.0.exp_avg`), so any safetensors reader opens
 * it; the structure is JSON in the file's metadata under "ringtorch.tree". Values with a
 * stateDict() (modules, optimizers, schedulers) are saved through it. The write is atomic.
 *
 *   rt.save({ model: model.stateDict(), optimizer: opt.stateDict(), epoch: 3 }, "ckpt.safetensors");
 */
export function save(obj: unknown, path: string): void {
  checkArity("save", arguments, 2, 'rt.save(obj, "file.safetensors")');
  if (typeof path !== "string" || path === "") throw new TypeError(`save: expected a file path as the second argument (torch.save(obj, f) order), got ${typeof path}`);
  const tensors: TensorDict = {};
  const seen = new Map<Tensor, string>();
  const walk = (v: unknown, at: string[]): Tree => {
    const where = at.length > 0 ? at.join(".") : "the object";
    if (v instanceof Tensor) {
      // A tensor reached twice (tied weights) is stored once and referenced twice, as torch.save keeps sharing.
      const known = seen.get(v);
      if (known !== undefined) return { __tensor__: known };
      const name = at.length > 0 ? at.join(".") : "tensor";
      if (name in tensors) throw new Error(`save: two tensors would both be named ${JSON.stringify(name)}; rename a key containing "."`);
      tensors[name] = v;
      seen.set(v, name);
      return { __tensor__: name };
    }
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (typeof v === "number") return Number.isFinite(v) ? v : { __number__: String(v) };
    if (typeof v === "bigint") return { __bigint__: v.toString() };
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...at, String(i)]));
    if (typeof v === "object" && typeof (v as { stateDict?: unknown }).stateDict === "function") return walk((v as { stateDict(): unknown }).stateDict(), at);
    if (isPlainObject(v)) {
      const out: { [key: string]: Tree } = {};
      for (const [k, x] of Object.entries(v)) {
        if (k.startsWith("__") && k.endsWith("__")) throw new Error(`save: the key ${JSON.stringify(k)} at ${where} is reserved (names like __tensor__ mark values in the file)`);
        out[k] = walk(x, [...at, k]);
      }
      return out;
    }
    const kind = typeof v === "object" ? `a ${(v as object).constructor?.name ?? "object"}` : typeof v;
    throw new TypeError(`save: ${where} is ${kind}, which has no file form; save objects, arrays, numbers, strings, booleans, null, bigints and tensors (no pickle here)`);
  };
  const tree = walk(obj, []);
  saveTensors(tensors, path, { metadata: { [TREE_KEY]: JSON.stringify(tree) } });
}

/**
 * Loads what save() wrote, structure and tensors. A safetensors file written elsewhere (no
 * "ringtorch.tree") loads as its flat object of tensors by name, e.g. a Hugging Face model.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function load(path: string, options: { weightsOnly?: boolean; mapLocation?: string } = {}): any {
  checkArity("load", arguments, 2, 'rt.load("file.safetensors")');
  // torch.load's keywords, for ported lines: there is no pickle, so weightsOnly is always true here; the only device is the CPU.
  checkOptions("load", options, ["weightsOnly", "mapLocation"]);
  if (options.mapLocation !== undefined && !/^cpu(:\d+)?$/.test(options.mapLocation)) {
    throw new TypeError(`load: mapLocation ${JSON.stringify(options.mapLocation)} is not a device here; ringtorch loads onto the CPU ("cpu")`);
  }
  const { tensors, metadata } = loadFile(path);
  const text = metadata[TREE_KEY];
  if (text === undefined) return tensors;
  let tree: unknown;
  try {
    tree = JSON.parse(text);
  } catch (err) {
    throw new Error(`load: ${path}: the "${TREE_KEY}" metadata is not valid JSON (${(err as Error).message})`);
  }
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) {
      if ("__tensor__" in v) {
        const t = tensors[v.__tensor__ as string];
        if (!t) throw new Error(`load: ${path}: the structure names a tensor ${JSON.stringify(v.__tensor__)} that the file does not hold`);
        return t;
      }
      if ("__bigint__" in v) return BigInt(v.__bigint__ as string);
      if ("__number__" in v) return Number(v.__number__);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(tree);
}
