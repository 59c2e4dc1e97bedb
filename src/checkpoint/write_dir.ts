import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../util/atomic_file.js";
import { crcOf, MANIFEST, type Manifest, type ManifestFile } from "./manifest.js";

export interface FileToWrite {
  name: string;
  chunks: Uint8Array[];
}

export interface WriteJob {
  dir: string;
  files: FileToWrite[];
  /** The manifest to write after the files, or null when another rank writes it. */
  manifest: (Omit<Manifest, "files"> & { extraFiles: ManifestFile[] }) | null;
}

/** Writes each file atomically and returns its size and CRC-32 for the manifest. */
export function writeFiles(dir: string, files: readonly FileToWrite[]): ManifestFile[] {
  mkdirSync(dir, { recursive: true });
  return files.map(({ name, chunks }) => {
    writeFileAtomic(join(dir, name), chunks);
    return { name, bytes: chunks.reduce((n, c) => n + c.byteLength, 0), crc32: crcOf(chunks) };
  });
}

/**
 * Writes the files of a job, then (if the job carries one) the manifest listing them with every
 * file that other ranks wrote. The manifest goes last: a directory without one is an incomplete
 * checkpoint, whatever else it holds, so a crash at any point never leaves one that looks complete.
 */
export function runWriteJob(job: WriteJob): Manifest | null {
  const written = writeFiles(job.dir, job.files);
  if (!job.manifest) return null;
  const { extraFiles, ...rest } = job.manifest;
  const manifest: Manifest = { ...rest, files: [...written, ...extraFiles] };
  writeFileAtomic(join(job.dir, MANIFEST), [new TextEncoder().encode(JSON.stringify(manifest, null, 2))]);
  return manifest;
}
