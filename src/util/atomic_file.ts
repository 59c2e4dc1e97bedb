import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * Writes a file so that a crash at any moment leaves either the old file or the complete new one:
 * the bytes go to a temporary name beside it, are fsynced, renamed over the target, and the
 * directory is fsynced so that the rename itself survives a power loss.
 */
export function writeFileAtomic(path: string, chunks: readonly Uint8Array[]): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = openSync(tmp, "w", 0o644);
  try {
    for (const chunk of chunks) {
      let written = 0;
      while (written < chunk.byteLength) written += writeSync(fd, chunk, written, chunk.byteLength - written);
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
