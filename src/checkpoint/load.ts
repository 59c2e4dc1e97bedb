import { closeSync } from "node:fs";
import type { Tensor } from "../tensor/tensor.js";
import { readSafetensors } from "../serialization/io.js";
import { checkOptions } from "../util/options.js";
import { latest } from "./directory.js";
import { openRegularFile, readFully } from "./files.js";
import { crcOf, listedFile, verifyCheckpoint, type Manifest, type ManifestFile } from "./manifest.js";
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

/** V8 cannot hold a longer string, so a state.json this large could not be parsed anyway. */
const STATE_LIMIT_BYTES = 512 * 1024 * 1024;

/**
 * Loads one checkpoint directory, or the newest complete one under a root of step directories.
 * Every file is checked against the manifest's size and CRC-32 first: a truncated or corrupt
 * checkpoint is an error here, and nothing of it is returned. Only files the manifest lists are
 * read, each a regular file inside the folder, and each again checksummed as it is loaded.
 */
export function load(path: string, options: { rank?: number } = {}): LoadedCheckpoint {
  checkOptions("checkpoint.load", options, ["rank"]);
  let dir = path;
  let manifest: Manifest;
  try {
    manifest = verifyCheckpoint(dir);
  } catch (err) {
    const found = latest(path, { onSkip: () => {} });
    if (!found) throw err;
    ({ path: dir, manifest } = found);
  }
  return loadVerified(dir, manifest, options.rank ?? 0);
}

/**
 * Loads a checkpoint whose manifest was just verified. The bytes loaded are checksummed as they
 * are read, so a file swapped or changed after the verification is an error, not a silent load.
 */
export function loadVerified(dir: string, manifest: Manifest, rank: number): LoadedCheckpoint {
  const cache = new Map<string, Map<string, Tensor>>();
  const readGroup = (file: string, referredFrom: string): Map<string, Tensor> => {
    let group = cache.get(file);
    if (!group) cache.set(file, (group = new Map(Object.entries(readTensors(dir, listedFile(dir, manifest, file, referredFrom))))));
    return group;
  };
  const restore = (prefix: string): Record<string, unknown> | null => {
    const stateName = `${prefix}${STATE_FILE}`;
    if (!manifest.files.some((f) => f.name === stateName)) return null;
    const bytes = readListed(dir, listedFile(dir, manifest, stateName, "the manifest"), STATE_LIMIT_BYTES);
    const json = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    return joinState(json, (file, name) => {
      if (typeof file !== "string") throw new Error(`checkpoint ${dir}: ${stateName} refers to a tensor file ${JSON.stringify(file)}; expected a name`);
      const t = readGroup(`${prefix}${file}.safetensors`, stateName).get(name);
      if (!t) throw new Error(`checkpoint ${dir}: ${prefix}${file}.safetensors has no tensor named ${JSON.stringify(name)}`);
      return t;
    }) as Record<string, unknown>;
  };
  const state = restore("");
  if (!state) throw new Error(`checkpoint ${dir}: the manifest lists no ${STATE_FILE}`);
  return { path: dir, manifest, state, sharded: restore(`rank_${String(rank).padStart(5, "0")}.`) };
}

function checkSize(dir: string, f: ManifestFile, size: number): void {
  if (size !== f.bytes) throw new Error(`checkpoint ${dir}: ${f.name} has ${size} bytes, the manifest says ${f.bytes} (truncated or overwritten)`);
}

function checkCrc(dir: string, f: ManifestFile, crc: number): void {
  if (crc !== f.crc32) throw new Error(`checkpoint ${dir}: ${f.name} fails its checksum (crc32 ${crc} ≠ ${f.crc32}): the file is corrupt`);
}

/** A listed file's whole content, checksummed. */
function readListed(dir: string, f: ManifestFile, maxBytes: number): Uint8Array {
  const { fd, size } = openRegularFile(dir, f.name);
  try {
    checkSize(dir, f, size);
    if (size > maxBytes) throw new Error(`checkpoint ${dir}: ${f.name} is ${size} bytes, more than the ${maxBytes} it can be`);
    const bytes = new Uint8Array(size);
    readFully(fd, bytes, 0, `checkpoint ${dir}: ${f.name}`);
    checkCrc(dir, f, crcOf([bytes]));
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** A listed safetensors file's tensors, read once in file order with the checksum of every byte. */
function readTensors(dir: string, f: ManifestFile): Record<string, Tensor> {
  const { fd, size } = openRegularFile(dir, f.name);
  try {
    checkSize(dir, f, size);
    // Every byte was read and checksummed by the verification before this allocates anything.
    const loaded = readSafetensors(fd, `checkpoint ${dir}: ${f.name}`, { checksum: true, allowSparse: true });
    checkSize(dir, f, loaded.bytes);
    checkCrc(dir, f, loaded.crc32);
    return loaded.tensors;
  } finally {
    closeSync(fd);
  }
}
