import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { crc32 } from "node:zlib";
import { IO_SLICE_BYTES, writeFileAtomic } from "../util/atomic_file.js";
import { checkOptions } from "../util/options.js";
import { itemSize } from "../tensor/dtype.js";
import { allocate } from "../tensor/storage.js";
import { Tensor } from "../tensor/tensor.js";
import { contiguousData } from "../ops/util.js";
import { buildHeader, FROM_FILE_DTYPE, HEADER_LIMIT_BYTES, parseHeader, SafetensorsError, type HeaderEntry } from "./safetensors.js";

export type TensorDict = Record<string, Tensor>;

export interface LoadedFile {
  tensors: TensorDict;
  metadata: Record<string, string>;
}

function checkHost(): void {
  if (endianness() !== "LE") throw new Error("safetensors: this host is big-endian; ringtorch reads and writes safetensors only on little-endian hosts");
}

function entriesOf(tensors: TensorDict, where: string): [string, Tensor][] {
  if (tensors === null || typeof tensors !== "object" || Array.isArray(tensors)) throw new TypeError(`${where}: expected an object of tensors by name (a state dict)`);
  const list = Object.entries(tensors);
  for (const [name, t] of list) if (!(t instanceof Tensor)) throw new TypeError(`${where}: "${name}" is ${t === null ? "null" : typeof t}, not a Tensor`);
  return list;
}

/** The bytes of a tensor as they go in the file (a view of its memory when contiguous). */
function bytesOf(t: Tensor): Uint8Array {
  const c = contiguousData(t);
  const size = itemSize(c.dtype);
  const data = c.storage.data;
  return new Uint8Array(data.buffer, data.byteOffset + c.offset * size, c.numel * size);
}

/**
 * Writes tensors to `path` in the safetensors format, atomically: the bytes go to a temporary
 * file in the same directory, which is flushed to disk and then renamed over `path`, so a crash
 * leaves either the old file or the new one, never a torn one.
 */
export function save(tensors: TensorDict, path: string, options: { metadata?: Record<string, string> } = {}): void {
  writeFileAtomic(path, encode(tensors, options, "save"));
}

/** Reads every tensor of a safetensors file; see loadFile for the metadata too. */
export function load(path: string, options: LoadOptions = {}): TensorDict {
  checkOptions("serialization.load", options, LOAD_OPTIONS);
  return loadFile(path, options).tensors;
}

export interface LoadOptions {
  /**
   * Load a file that is mostly holes (see loadFile). Default false: a sparse file is refused, since
   * its tensors would take memory for data that is not on disk.
   */
  allowSparse?: boolean;
}

const LOAD_OPTIONS = ["allowSparse"] as const;

/**
 * Reads a safetensors file: the header is read and fully checked first (every tensor's size
 * against the file's real length), then each tensor's bytes are read straight into its own
 * memory, in bounded slices. Any problem throws before a tensor is returned. The path may be a
 * symbolic link (Hugging Face's cache is made of them), but what it names must be a regular file:
 * a FIFO or a device is refused at once instead of blocking or reading without end. A file of
 * 64 MiB or more with less than a sixteenth of it stored on disk (a sparse file, say 4 KiB
 * declaring 1.9 GiB of zeros) is refused unless `allowSparse` is set.
 */
export function loadFile(path: string, options: LoadOptions = {}): LoadedFile {
  checkOptions("serialization.loadFile", options, LOAD_OPTIONS);
  checkHost();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const { tensors, metadata } = readSafetensors(fd, path, { allowSparse: options.allowSparse ?? false, checksum: false });
    return { tensors, metadata };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads an open safetensors file from its start, in file order, optionally with the CRC-32 of
 * every byte read (the checkpoint loader compares it with its manifest, so the bytes checked are
 * the bytes loaded). `fd` must be a regular file; anything else is refused before a read.
 */
export function readSafetensors(fd: number, source: string, options: { allowSparse: boolean; checksum: boolean }): LoadedFile & { crc32: number; bytes: number } {
  checkHost();
  const stat = fstatSync(fd);
  if (!stat.isFile()) throw new SafetensorsError(`safetensors: ${source} is not a regular file (a FIFO, device or folder cannot be a safetensors file)`);
  const fileLength = stat.size;
  if (!options.allowSparse && fileLength >= SPARSE_CHECK_BYTES && stat.blocks > 0 && stat.blocks * 512 * 16 < fileLength) {
    throw new SafetensorsError(
      `safetensors: ${source} is ${fileLength} bytes long but only ${stat.blocks * 512} are stored on disk (a sparse file): its tensors would take ` +
        `${fileLength} bytes of memory for data that is not there. Pass { allowSparse: true } if the file is genuine (a file system that stores zeros as holes)`,
    );
  }
  let crc = 0;
  const read = (target: Uint8Array, position: number): void => {
    readExactly(fd, target, position, source);
    if (options.checksum) for (let at = 0; at < target.length; at += IO_SLICE_BYTES) crc = crc32(target.subarray(at, at + IO_SLICE_BYTES), crc);
  };
  const lengthBytes = new Uint8Array(8);
  read(lengthBytes.subarray(0, Math.min(8, fileLength)), 0);
  const headerLength = Number(new DataView(lengthBytes.buffer).getBigUint64(0, true));
  // parseHeader rejects a short file or a header longer than the file before we would read it.
  const fits = fileLength >= 8 && headerLength <= HEADER_LIMIT_BYTES && 8 + headerLength <= fileLength;
  const head = new Uint8Array(fits ? 8 + headerLength : 8);
  head.set(lengthBytes);
  if (fits) read(head.subarray(8), 8);
  const parsed = parseHeader(head, fileLength, source);
  // The tensors tile the data exactly (parseHeader checks it), so reading them by offset reads
  // the file once, start to end: the checksum covers every byte.
  const tensors = makeTensors(parsed.entries, (e, target) => read(target, parsed.dataStart + e.begin));
  return { tensors, metadata: parsed.metadata, crc32: crc >>> 0, bytes: fileLength };
}

/** Files this long are checked for holes before their tensors are allocated. */
const SPARSE_CHECK_BYTES = 64 * 1024 * 1024;

function readExactly(fd: number, target: Uint8Array, position: number, path: string): void {
  for (let done = 0; done < target.length; ) {
    const n = readSync(fd, target, done, Math.min(IO_SLICE_BYTES, target.length - done), position + done);
    if (n === 0) throw new SafetensorsError(`safetensors: ${path}: the file ended early at byte ${position + done} (it changed while being read?)`);
    done += n;
  }
}

/** The safetensors bytes of `tensors`, in memory. */
export function serialize(tensors: TensorDict, options: { metadata?: Record<string, string> } = {}): Uint8Array {
  const chunks = encode(tensors, options, "serialize");
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Tensors and metadata from safetensors bytes in memory, checked as loadFile checks a file. */
export function deserialize(bytes: Uint8Array, source = "buffer"): LoadedFile {
  checkHost();
  const parsed = parseHeader(bytes, bytes.length, source);
  const tensors = makeTensors(parsed.entries, (e, target) => target.set(bytes.subarray(parsed.dataStart + e.begin, parsed.dataStart + e.end)));
  return { tensors, metadata: parsed.metadata };
}

/** Allocates every tensor, then fills each through `read` (into the tensor's bytes, or a staging buffer for int64). */
function makeTensors(entries: HeaderEntry[], read: (e: HeaderEntry, target: Uint8Array) => void): TensorDict {
  const out: TensorDict = {};
  for (const e of [...entries].sort((a, b) => a.begin - b.begin)) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    const storage = allocate(e.dtype, n, false);
    const data = storage.data;
    if (e.fileDtype === "I64") {
      const staging = new BigInt64Array(n);
      read(e, new Uint8Array(staging.buffer));
      for (let i = 0; i < n; i++) {
        const v = staging[i];
        if (v > 2147483647n || v < -2147483648n) {
          throw new SafetensorsError(`safetensors: "${e.name}" is int64 with the value ${v}, which does not fit ringtorch's int32`);
        }
        data[i] = Number(v);
      }
    } else {
      read(e, new Uint8Array(data.buffer, data.byteOffset, n * FROM_FILE_DTYPE[e.fileDtype].bytes));
    }
    out[e.name] = new Tensor(storage, e.shape);
  }
  // Return in the header's order, which is how the writer listed them.
  const ordered: TensorDict = {};
  for (const e of entries) ordered[e.name] = out[e.name];
  return ordered;
}

/**
 * The safetensors encoding of `tensors` as chunks to write in order: the header, then a view of
 * each tensor's memory (no copy for contiguous tensors). Checkpoints write these from a worker.
 */
export function safetensorsChunks(tensors: TensorDict | Map<string, Tensor>, options: { metadata?: Record<string, string> } = {}): Uint8Array[] {
  return encode(tensors instanceof Map ? Object.fromEntries(tensors) : tensors, options, "safetensorsChunks");
}

function encode(tensors: TensorDict, options: { metadata?: Record<string, string> }, where: string): Uint8Array[] {
  checkHost();
  const list = entriesOf(tensors, where);
  const { header } = buildHeader(list.map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape })), options.metadata);
  return [header, ...list.map(([, t]) => bytesOf(t))];
}
