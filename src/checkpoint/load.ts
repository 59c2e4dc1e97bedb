import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Tensor } from "../tensor/tensor.js";
import { loadFile } from "../serialization/io.js";
import { latest } from "./directory.js";
import { verifyCheckpoint, type Manifest } from "./manifest.js";
import { joinState } from "./state_split.js";
import { STATE_FILE } from "./save.js";

export interface LoadedCheckpoint {
  path: string;
  manifest: Manifest;
  /** The saved state, with tensors back in place (a model's state dict under `model`, …). */
  state: Record<string, unknown>;
  /** This rank's sharded state, when the checkpoint has one for it. */
  sharded: Record<string, unknown> | null;
}

/**
 * Loads one checkpoint directory, or the newest complete one under a root of step directories.
 * Every file is checked against the manifest's size and CRC-32 first: a truncated or corrupt
 * checkpoint is an error here, and nothing of it is returned.
 */
export function load(path: string, options: { rank?: number } = {}): LoadedCheckpoint {
  let dir = path;
  let manifest: Manifest;
  try {
    manifest = verifyCheckpoint(dir);
  } catch (err) {
    const found = latest(path, { onSkip: () => {} });
    if (!found) throw err;
    ({ path: dir, manifest } = found);
  }
  const cache = new Map<string, Map<string, Tensor>>();
  const readGroup = (file: string): Map<string, Tensor> => {
    let group = cache.get(file);
    if (!group) cache.set(file, (group = new Map(Object.entries(loadFile(join(dir, file)).tensors))));
    return group;
  };
  const restore = (prefix: string): Record<string, unknown> | null => {
    if (!manifest.files.some((f) => f.name === `${prefix}${STATE_FILE}`)) return null;
    const json = JSON.parse(readFileSync(join(dir, `${prefix}${STATE_FILE}`), "utf8")) as unknown;
    return joinState(json, (file, name) => {
      const t = readGroup(`${prefix}${file}.safetensors`).get(name);
      if (!t) throw new Error(`checkpoint ${dir}: ${prefix}${file}.safetensors has no tensor named ${JSON.stringify(name)}`);
      return t;
    }) as Record<string, unknown>;
  };
  const state = restore("");
  if (!state) throw new Error(`checkpoint ${dir}: the manifest lists no ${STATE_FILE}`);
  const rank = options.rank ?? 0;
  return { path: dir, manifest, state, sharded: restore(`rank_${String(rank).padStart(5, "0")}.`) };
}
