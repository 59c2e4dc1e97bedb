import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";

/** The file a checkpoint directory is complete with; written last, after every other file. */
export const MANIFEST = "metadata.json";
export const FORMAT_VERSION = 1;

export interface ManifestFile {
  name: string;
  bytes: number;
  crc32: number;
}

export interface Manifest {
  format: "ringtorch-checkpoint";
  version: number;
  step: number;
  worldSize: number;
  createdAt: string;
  files: ManifestFile[];
}

/** CRC-32 over several chunks, as if they were one buffer. */
export function crcOf(chunks: readonly Uint8Array[]): number {
  let crc = 0;
  for (const c of chunks) crc = crc32(c, crc);
  return crc >>> 0;
}

/**
 * Reads and checks a checkpoint directory: the manifest parses, and every file it lists exists
 * with its recorded size and CRC-32. Returns the manifest, or throws saying what is wrong.
 */
export function verifyCheckpoint(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) throw new Error(`checkpoint ${dir} is incomplete: it has no ${MANIFEST} (the save did not finish)`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (err) {
    throw new Error(`checkpoint ${dir}: ${MANIFEST} is not valid JSON (${(err as Error).message})`);
  }
  if (manifest.format !== "ringtorch-checkpoint" || !Array.isArray(manifest.files)) {
    throw new Error(`checkpoint ${dir}: ${MANIFEST} is not a ringtorch checkpoint manifest`);
  }
  if (manifest.version > FORMAT_VERSION) {
    throw new Error(`checkpoint ${dir} has format version ${manifest.version}; this ringtorch reads up to ${FORMAT_VERSION}`);
  }
  for (const f of manifest.files) {
    const p = join(dir, f.name);
    if (!existsSync(p)) throw new Error(`checkpoint ${dir}: ${f.name} is missing`);
    const size = statSync(p).size;
    if (size !== f.bytes) throw new Error(`checkpoint ${dir}: ${f.name} has ${size} bytes, the manifest says ${f.bytes} (truncated or overwritten)`);
    const crc = crcOf([readFileSync(p)]);
    if (crc !== f.crc32) throw new Error(`checkpoint ${dir}: ${f.name} fails its checksum (crc32 ${crc} ≠ ${f.crc32}): the file is corrupt`);
  }
  return manifest;
}
