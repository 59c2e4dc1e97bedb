import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { noGrad } from "../autograd/grad_mode.js";
import { to } from "../ops/creation.js";
import { contiguous, transpose } from "../ops/view.js";
import type { Module } from "../nn/module.js";
import { load, save } from "../serialization/io.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import type { HfConfig } from "./config.js";

/** How a model's state-dict names map onto a Hugging Face weight file. */
export interface WeightLayout {
  /** The prefix HF gives the base model inside a task model ("transformer", "bert"). */
  basePrefix: string;
  /** True for names whose tensor HF stores transposed (GPT-2's Conv1D keeps [in, out]). */
  transposed(name: string): boolean;
  /** File tensors the model has no slot for but may ignore (tied heads, non-weight buffers). */
  ignorable(name: string): boolean;
}

export const WEIGHTS_FILE = "model.safetensors";
const INDEX_FILE = "model.safetensors.index.json";

/** Every tensor of dir's weights: model.safetensors, or the shards listed by its index. */
function readWeights(dir: string, where: string): { tensors: Map<string, Tensor>; source: string } {
  const single = join(dir, WEIGHTS_FILE);
  if (existsSync(single)) return { tensors: new Map(Object.entries(load(single))), source: single };
  const index = join(dir, INDEX_FILE);
  if (existsSync(index)) {
    const map = (JSON.parse(readFileSync(index, "utf8")) as { weight_map?: Record<string, string> }).weight_map;
    if (!map || typeof map !== "object") throw new Error(`${where}: ${index} has no weight_map`);
    const tensors = new Map<string, Tensor>();
    for (const file of new Set(Object.values(map))) for (const [k, v] of Object.entries(load(join(dir, file)))) tensors.set(k, v);
    return { tensors, source: index };
  }
  const hint = existsSync(join(dir, "pytorch_model.bin")) ? " (pytorch_model.bin is a pickle, which ringtorch does not read: save it with safe_serialization=True)" : "";
  throw new Error(`${where}: no ${WEIGHTS_FILE} (or ${INDEX_FILE}) in ${dir}${hint}`);
}

/**
 * Fills every parameter and persistent buffer of `model` from the Hugging Face weights in `dir`,
 * by HF's names. A file written for the task model (names under basePrefix) loads into the base
 * model and the other way round. Every name and shape is checked before anything is copied: a
 * shape that disagrees names the tensor and both shapes; missing and unknown tensors are listed.
 * Returns the names of a task head that the file (a base model's) lacked and that keep their
 * fresh initialisation.
 */
export function loadPretrainedWeights(model: Module, dir: string, layout: WeightLayout, where: string): string[] {
  const { tensors, source } = readWeights(dir, where);
  const prefix = `${layout.basePrefix}.`;
  const used = new Set<string>();
  let viaPrefix = false;
  const plan: [Tensor, Tensor, boolean][] = [];
  const missing: string[] = [];
  for (const [name, target] of Object.entries(model.stateDict({ keepVars: true }))) {
    const candidates = [name, prefix + name, name.startsWith(prefix) ? name.slice(prefix.length) : null];
    const fileName = candidates.find((c): c is string => c !== null && tensors.has(c));
    if (fileName === prefix + name) viaPrefix = true;
    if (!fileName) {
      missing.push(name);
      continue;
    }
    used.add(fileName);
    const t = tensors.get(fileName)!;
    const flip = layout.transposed(name);
    const expected = flip ? [...target.shape].reverse() : target.shape;
    if (!shapesEqual(t.shape, expected)) {
      throw new RangeError(`${where}: tensor "${fileName}" has shape ${formatShape(t.shape)} in ${source}, but the model built from config.json needs ${formatShape(expected)}${flip ? " (stored transposed, as HF's Conv1D)" : ""}`);
    }
    plan.push([target, t, flip]);
  }
  // A task head (outside the base model) missing from a base model's file starts from its
  // initialisation, as HF's from_pretrained does when fine-tuning begins.
  const isTaskModel = Object.keys(model.stateDict()).some((k) => k.startsWith(prefix));
  const fresh = isTaskModel && used.size > 0 ? missing.filter((m) => !m.startsWith(prefix)) : [];
  missing.splice(0, missing.length, ...missing.filter((m) => !fresh.includes(m)));
  if (missing.length > 0) throw new Error(`${where}: ${source} lacks ${missing.length} tensor(s) the model needs: ${missing.slice(0, 8).map((m) => `"${m}"`).join(", ")}${missing.length > 8 ? ", …" : ""}`);
  // A base model read from a task model's file leaves the task head behind, as HF does.
  const unexpected = [...tensors.keys()].filter((k) => !used.has(k) && !layout.ignorable(k) && !(viaPrefix && !k.startsWith(prefix)));
  if (unexpected.length > 0) {
    throw new Error(`${where}: ${source} holds ${unexpected.length} tensor(s) this model has no place for: ${unexpected.slice(0, 8).map((m) => `"${m}"`).join(", ")}${unexpected.length > 8 ? ", …" : ""} (is config.json for another architecture?)`);
  }
  noGrad(() => {
    for (const [target, t, flip] of plan) target.copy_(to(flip ? transpose(t, 0, 1) : t, target.dtype));
  });
  return fresh;
}

/**
 * Writes `dir/config.json` and `dir/model.safetensors` as Hugging Face's save_pretrained does:
 * HF names, Conv1D weights transposed back, tied weights stored once, metadata format "pt".
 */
export function savePretrainedWeights(model: Module, dir: string, config: HfConfig, layout: WeightLayout): void {
  mkdirSync(dir, { recursive: true });
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(model.stateDict())) out[name] = layout.transposed(name) ? contiguous(transpose(t, 0, 1)) : t;
  save(out, join(dir, WEIGHTS_FILE), { metadata: { format: "pt" } });
  writeFileSync(join(dir, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
}
