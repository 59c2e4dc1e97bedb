import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * The most one read or write call moves: Node refuses lengths of 2 GiB or more in a single call,
 * and a bounded slice lets checksums and progress follow the bytes as they go.
 */
export const IO_SLICE_BYTES = 64 * 1024 * 1024;

export interface AtomicWriteOptions {
  /** Permission bits of the new file (default 0o644, less the umask). */
  mode?: number;
  /** Sees every slice in file order as it is written: a checksum is computed in the same pass. */
  onSlice?: (slice: Uint8Array) => void;
}

/**
 * Writes a file so that a crash at any moment leaves either the old file or the complete new one:
 * the bytes go to a temporary name beside it, are fsynced, renamed over the target, and the
 * directory is fsynced so that the rename itself survives a power loss. The temporary file is
 * created exclusively (O_EXCL), so a symbolic link planted under its name is never followed, and
 * the rename replaces a link at the target rather than writing through it. Chunks of any size are
 * written in slices of IO_SLICE_BYTES.
 */
export function writeFileAtomic(path: string, chunks: readonly Uint8Array[], options: AtomicWriteOptions = {}): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = openSync(tmp, "wx", options.mode ?? 0o644);
  try {
    for (const chunk of chunks) {
      for (let at = 0; at < chunk.byteLength; ) {
        const slice = chunk.subarray(at, Math.min(chunk.byteLength, at + IO_SLICE_BYTES));
        for (let written = 0; written < slice.byteLength; ) written += writeSync(fd, slice, written, slice.byteLength - written);
        options.onSlice?.(slice);
        at += slice.byteLength;
      }
    }
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  fsyncDirectory(dirname(path));
}

/** Makes a rename durable. Some platforms cannot open a directory; there it is best effort. */
export function fsyncDirectory(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // The rename itself already happened; only its durability across a power loss is at stake.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
