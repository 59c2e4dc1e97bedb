import { dirname, join } from "node:path";
import { crc32 } from "node:zlib";
import { writeFileAtomic } from "../util/atomic_file.js";
import { checkFileName, FILE_MODE, makeStepDir } from "./files.js";
import { MANIFEST, type Manifest, type ManifestFile } from "./manifest.js";

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

/**
 * Writes each file atomically (mode 0600, in bounded slices, so a tensor of any size goes) and
 * returns its size and CRC-32 for the manifest, computed from the bytes as they were written.
 * The step folder is created 0700, and refused when something else already holds its name.
 */
export function writeFiles(dir: string, files: readonly FileToWrite[]): ManifestFile[] {
  makeStepDir(dirname(dir), dir);
  return files.map(({ name, chunks }) => {
    checkFileName(dir, name, "checkpoint.save");
    let crc = 0;
    let bytes = 0;
    writeFileAtomic(join(dir, name), chunks, {
      mode: FILE_MODE,
      onSlice: (slice) => {
        crc = crc32(slice, crc);
        bytes += slice.byteLength;
      },
    });
    return { name, bytes, crc32: crc >>> 0 };
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
  writeFileAtomic(join(job.dir, MANIFEST), [new TextEncoder().encode(JSON.stringify(manifest, null, 2))], { mode: FILE_MODE });
  return manifest;
}
