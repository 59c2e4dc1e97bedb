import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { IO_SLICE_BYTES } from "../util/atomic_file.js";

/**
 * How a checkpoint touches its files. A checkpoint folder may come from anywhere (another user's
 * disk, a download), so nothing in it is trusted: a name comes from the manifest and must be a
 * plain file name in the folder; what it names must be a regular file (no symbolic link, FIFO,
 * device or folder), opened without following links or blocking; and every read is bounded by
 * the size the manifest records.
 */

/** Folders a save creates: only their owner can list them. */
export const DIR_MODE = 0o700;
/** Files a save writes: only their owner can read them (a model's weights are often private). */
export const FILE_MODE = 0o600;

const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;

/** Throws unless `name` is a plain file name: no separator, no "." or "..", no leading dot. */
export function checkFileName(dir: string, name: unknown, where: string): asserts name is string {
  if (typeof name !== "string" || !PLAIN_NAME.test(name)) {
    throw new Error(
      `checkpoint ${dir}: ${where} names the file ${JSON.stringify(name)}; expected a plain file name inside the checkpoint folder ` +
        "(letters, digits, '.', '_', '-'; no path separator; not starting with '.')",
    );
  }
}

function kindOf(stat: Stats): string {
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isDirectory()) return "a folder";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  if (stat.isSocket()) return "a socket";
  return stat.isFile() ? "a file" : "not a regular file";
}

/**
 * Opens `dir/name` for reading when it is a regular file, and returns its descriptor and size.
 * lstat refuses a link or special file by what it is; O_NOFOLLOW and O_NONBLOCK make the open
 * itself safe should the name be swapped in between (a FIFO then fails fstat instead of blocking).
 */
export function openRegularFile(dir: string, name: string): { fd: number; size: number } {
  const path = join(dir, name);
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`checkpoint ${dir}: ${name} is missing`);
    throw err;
  }
  if (!stat.isFile()) throw new Error(`checkpoint ${dir}: ${name} is ${kindOf(stat)}; a checkpoint holds only regular files`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new Error(`checkpoint ${dir}: ${name} is a symbolic link; a checkpoint holds only regular files`);
    throw err;
  }
  const opened = fstatSync(fd);
  if (!opened.isFile()) {
    closeSync(fd);
    throw new Error(`checkpoint ${dir}: ${name} is ${kindOf(opened)}; a checkpoint holds only regular files`);
  }
  return { fd, size: opened.size };
}

/** Reads exactly target.length bytes at `position`, in bounded slices. */
export function readFully(fd: number, target: Uint8Array, position: number, what: string): void {
  for (let done = 0; done < target.length; ) {
    const n = readSync(fd, target, done, Math.min(IO_SLICE_BYTES, target.length - done), position + done);
    if (n === 0) throw new Error(`${what} ended early at byte ${position + done} (it changed while being read?)`);
    done += n;
  }
}

/** CRC-32 of the first `bytes` bytes of an open file, streamed through one bounded buffer. */
export function crcOfFile(fd: number, bytes: number, what: string): number {
  const buffer = new Uint8Array(Math.min(IO_SLICE_BYTES, Math.max(bytes, 1)));
  let crc = 0;
  for (let at = 0; at < bytes; ) {
    const slice = buffer.subarray(0, Math.min(buffer.length, bytes - at));
    readFully(fd, slice, at, what);
    crc = crc32(slice, crc);
    at += slice.length;
  }
  return crc >>> 0;
}

/**
 * The whole content of a small regular file (a manifest, state.json), refusing one over
 * `maxBytes` before reading it.
 */
export function readSmallFile(dir: string, name: string, maxBytes: number): Uint8Array {
  const { fd, size } = openRegularFile(dir, name);
  try {
    if (size > maxBytes) throw new Error(`checkpoint ${dir}: ${name} is ${size} bytes, more than the ${maxBytes} such a file can be`);
    const bytes = new Uint8Array(size);
    readFully(fd, bytes, 0, `checkpoint ${dir}: ${name}`);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `dir` (and `root` above it when missing, mode 0700), or accepts it when it is already
 * a real folder of this user's. A symbolic link, a file or a folder of another user under the
 * step's name is refused: a save must never write through a name someone else planted.
 */
export function makeStepDir(root: string, dir: string): void {
  mkdirSync(root, { recursive: true, mode: DIR_MODE });
  try {
    mkdirSync(dir, { mode: DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`checkpoint.save: ${dir} is ${kindOf(stat)}, not a folder; refusing to write the checkpoint through it (remove it first)`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new Error(`checkpoint.save: ${dir} belongs to user ${stat.uid}, not to this process's user ${uid}; refusing to write the checkpoint into it`);
  }
}
