import { closeSync, lstatSync } from "node:fs";
import { join, resolve } from "node:path";
import { crc32 } from "node:zlib";
import { IO_SLICE_BYTES } from "../util/atomic_file.js";
import { checkFileName, crcOfFile, openRegularFile, readSmallFile } from "./files.js";

/** The file a checkpoint directory is complete with; written last, after every other file. */
export const MANIFEST = "metadata.json";
export const FORMAT_VERSION = 1;
/** A manifest lists names, sizes and checksums: far below this even for a million files. */
const MANIFEST_LIMIT_BYTES = 256 * 1024 * 1024;

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

/** CRC-32 over several chunks, as if they were one buffer, in bounded slices. */
export function crcOf(chunks: readonly Uint8Array[]): number {
  let crc = 0;
  for (const c of chunks) for (let at = 0; at < c.byteLength; at += IO_SLICE_BYTES) crc = crc32(c.subarray(at, at + IO_SLICE_BYTES), crc);
  return crc >>> 0;
}

/** Checks one listed file's entry: a plain name, a whole size, a 32-bit checksum. */
export function checkManifestFile(dir: string, f: unknown, where: string): asserts f is ManifestFile {
  if (f === null || typeof f !== "object") throw new Error(`checkpoint ${dir}: ${where} lists ${JSON.stringify(f)}, not a file entry { name, bytes, crc32 }`);
  const { name, bytes, crc32: crc } = f as Record<string, unknown>;
  checkFileName(dir, name, where);
  if (name === MANIFEST) throw new Error(`checkpoint ${dir}: ${where} lists ${MANIFEST} itself`);
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 0) throw new Error(`checkpoint ${dir}: ${where} gives ${name} the size ${JSON.stringify(bytes)}; expected a whole number of bytes`);
  if (!Number.isInteger(crc) || (crc as number) < 0 || (crc as number) > 0xffffffff) {
    throw new Error(`checkpoint ${dir}: ${where} gives ${name} the checksum ${JSON.stringify(crc)}; expected a CRC-32 (0 to 4294967295)`);
  }
}

/** Reads and checks the manifest alone: its shape, and that every name is a plain file name listed once. */
export function readManifest(dir: string): Manifest {
  let bytes: Uint8Array;
  try {
    bytes = readSmallFile(dir, MANIFEST, MANIFEST_LIMIT_BYTES);
  } catch (err) {
    if (/ is missing$/.test((err as Error).message)) throw new Error(`checkpoint ${dir} is incomplete: it has no ${MANIFEST} (the save did not finish)`);
    throw err;
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(bytes)) as Manifest;
  } catch (err) {
    throw new Error(`checkpoint ${dir}: ${MANIFEST} is not valid JSON (${(err as Error).message})`);
  }
  if (manifest === null || typeof manifest !== "object" || manifest.format !== "ringtorch-checkpoint" || !Array.isArray(manifest.files)) {
    throw new Error(`checkpoint ${dir}: ${MANIFEST} is not a ringtorch checkpoint manifest`);
  }
  if (!Number.isInteger(manifest.version) || manifest.version > FORMAT_VERSION) {
    throw new Error(`checkpoint ${dir} has format version ${JSON.stringify(manifest.version)}; this ringtorch reads up to ${FORMAT_VERSION}`);
  }
  if (!Number.isSafeInteger(manifest.step) || manifest.step < 0 || !Number.isSafeInteger(manifest.worldSize) || manifest.worldSize < 1) {
    throw new Error(`checkpoint ${dir}: ${MANIFEST} has step ${JSON.stringify(manifest.step)} and worldSize ${JSON.stringify(manifest.worldSize)}; expected whole numbers`);
  }
  const seen = new Set<string>();
  for (const f of manifest.files) {
    checkManifestFile(dir, f, MANIFEST);
    if (seen.has(f.name)) throw new Error(`checkpoint ${dir}: ${MANIFEST} lists ${f.name} twice`);
    seen.add(f.name);
  }
  return manifest;
}

/** The manifest's entry for `name`, or an error saying the checkpoint does not list it. */
export function listedFile(dir: string, manifest: Manifest, name: string, referredFrom: string): ManifestFile {
  checkFileName(dir, name, referredFrom);
  const f = manifest.files.find((e) => e.name === name);
  if (!f) throw new Error(`checkpoint ${dir}: ${referredFrom} refers to ${name}, which the manifest does not list (only listed, checksummed files are read)`);
  return f;
}

/** Checks one listed file: a regular file of the recorded size whose bytes have the recorded CRC-32. */
function verifyFile(dir: string, f: ManifestFile): void {
  const { fd, size } = openRegularFile(dir, f.name);
  try {
    if (size !== f.bytes) throw new Error(`checkpoint ${dir}: ${f.name} has ${size} bytes, the manifest says ${f.bytes} (truncated or overwritten)`);
    const crc = crcOfFile(fd, f.bytes, `checkpoint ${dir}: ${f.name}`);
    if (crc !== f.crc32) throw new Error(`checkpoint ${dir}: ${f.name} fails its checksum (crc32 ${crc} ≠ ${f.crc32}): the file is corrupt`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and checks a checkpoint directory: the manifest parses, every name in it is a plain file
 * name, and every file it lists is a regular file with its recorded size and CRC-32, read in
 * bounded slices whatever its size. Returns the manifest, or throws saying what is wrong.
 */
export function verifyCheckpoint(dir: string): Manifest {
  const manifest = readManifest(dir);
  for (const f of manifest.files) verifyFile(dir, f);
  return manifest;
}

/**
 * Folders this process verified or wrote, and what their files looked like then (inode, size,
 * modification time): pruning after every save re-reads a checkpoint only when one of its files
 * changed. Loading never relies on this; it checks every byte it reads.
 */
const verified = new Map<string, string>();

function signature(dir: string, manifest: Manifest): string | undefined {
  try {
    return [MANIFEST, ...manifest.files.map((f) => f.name)]
      .map((name) => {
        const s = lstatSync(join(dir, name));
        return `${name}:${s.ino}:${s.size}:${s.mtimeMs}`;
      })
      .join("|");
  } catch {
    return undefined;
  }
}

/** Records that `dir` holds what its manifest says: its writer computed every checksum as it wrote. */
export function rememberVerified(dir: string): void {
  try {
    const sig = signature(dir, readManifest(dir));
    if (sig !== undefined) verified.set(resolve(dir), sig);
  } catch {
    // Then it is verified the slow way when it matters.
  }
}

/** verifyCheckpoint, skipping the reading of a folder this process already verified unchanged. */
export function verifyCheckpointOnce(dir: string): Manifest {
  const manifest = readManifest(dir);
  const key = resolve(dir);
  const before = signature(dir, manifest);
  if (before !== undefined && verified.get(key) === before) return manifest;
  for (const f of manifest.files) verifyFile(dir, f);
  if (before !== undefined && signature(dir, manifest) === before) verified.set(key, before);
  return manifest;
}
